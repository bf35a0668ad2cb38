"""Reading a recorded graph: its nodes in the order they were made (`graph_order`), what one
node of a backward pass did (`BackwardStep`, what `Tensor.backward_steps()` yields), and what a
released graph keeps of a tensor that is gone (`ReleasedTensor`).

The engine, the graph renderer and the debugging tools read the graph through these; this
module only reads: it never builds nodes nor computes gradients.
"""

from __future__ import annotations

import operator
import weakref
from typing import Any

import numpy as np

from .function import Function
from .state import explain_step


def graph_order(root_nodes: list) -> list:
    """Every node reachable from `root_nodes`, each after the nodes that made its inputs (in
    the order they were made). The graph renderer numbers its nodes in this order."""
    seen, stack = set(root_nodes), list(root_nodes)
    while stack:
        for parent in stack.pop().parents:
            if isinstance(parent, Function) and parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return sorted(seen, key=lambda node: node.sequence)


def topological_order(root_node: Any) -> list:
    """The nodes reachable from `root_node`, each before the nodes that made its inputs."""
    return graph_order([root_node])[::-1]


class BackwardStep(tuple):
    """What one node of the backward pass did: the tuple `(index, node, grad_output, returned)`
    that `backward_steps()` yields: its position in the pass, the `Function`, the gradient that
    arrived, and what its backward returned (one entry per input, in the broadcast shape).
    `grad_inputs`: what each input received (summed to its shape; None where none flows). Also
    `op` (the op's name), `output`, `inputs`."""

    __slots__ = ()
    index = property(operator.itemgetter(0))
    node = property(operator.itemgetter(1))
    grad_output = property(operator.itemgetter(2))
    returned = property(operator.itemgetter(3))

    @property
    def grad_inputs(self) -> tuple:
        node = self[1]  # (summed again when read: the pass itself keeps no second copy)
        todo = zip(node.parents, node.needs_input_grad, self[3])
        from .engine import fit  # (the engine's one place that sums to a shape)

        return tuple(fit(g, p, node) if n else None for p, n, g in todo)

    @property
    def op(self) -> str:
        return self.node.name

    @property
    def output(self) -> Any:
        return self.node.output

    @property
    def inputs(self) -> tuple:
        return self.node.inputs

    def __repr__(self) -> str:
        """One line: `step 2: Softmax -> weights (6, 6) |grad_out|=0.41 => scores (6, 6)
        |grad|=0.12` (the output, then each input; `|grad|=-` where no gradient flows)."""
        from .format import step_line  # the one way to print; not part of the core

        return step_line(self)

    __str__ = __repr__

    def explain(self) -> str:
        """Several lines: the op's formula, and the arrays that went in and came out (written
        by debug.py, which installs itself in state.py: the engine imports no debugging tool)."""
        return explain_step(self)

    def __eq__(self, other: object) -> bool:  # steps hold arrays: equal only to themselves
        return self is other

    def __hash__(self) -> int:
        return id(self)


class ReleasedTensor:
    """What a released graph keeps of an intermediate tensor: its metadata, not its array."""

    data = _data = None
    requires_grad = True
    is_leaf = False

    def __init__(self, shape: tuple, dtype: np.dtype, name: str | None, grad_fn: Any) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.name = name
        self._node = weakref.ref(grad_fn)  # (the node caches this record: no reference cycle)

    @property
    def grad_fn(self) -> Any:
        return self._node()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return (
            f"ReleasedTensor(shape={self.shape}, dtype={self.dtype}, grad_fn=<{self.grad_fn.name}>)"
        )
