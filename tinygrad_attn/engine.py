"""The backward engine: one topological sort, one loop, one place where gradients add up.

`backward_steps(root)` is the whole algorithm, as a generator: sort the graph (iteratively, so a
20,000-op chain needs no recursion), then for each node in reverse topological order take the
gradient that arrived at its output (`grad_out`), call the op's `backward`, and hand each
returned gradient to `accumulate`, which sums it to the input's shape (un-broadcasting) and adds
it where it belongs. `Tensor.backward()` just exhausts this generator, so stepping through it in
a debugger, or with `for step in loss.backward_steps()`, runs exactly the same code.

This module must not know any op's calculus, nor build graph nodes (function.py does).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .tensor import Tensor


class BackwardStep:
    """What one node of the backward pass did (the records `backward_steps()` yields).

    `index`: position in the pass; `op`: the op's name; `node`: the `Function`; `output`: the
    tensor the node made; `grad_output`: the gradient that arrived at it; `inputs`: its input
    tensors; `grad_inputs`: one array (already summed to that input's shape) or None per input.
    """

    __slots__ = ("index", "node", "grad_output", "grad_inputs")

    def __init__(self, index: int, node: Any, grad_output: np.ndarray, grad_inputs: tuple):
        self.index = index
        self.node = node
        self.grad_output = grad_output
        self.grad_inputs = grad_inputs

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

        def label(t: Any) -> str:
            return f"{t.name} {tuple(t.shape)}" if t.name else f"{tuple(t.shape)}"

        def norm(g: np.ndarray | None) -> str:
            return "-" if g is None else f"{float(np.linalg.norm(g)):.3g}"

        ins = ", ".join(
            f"{label(t)} |grad|={norm(g)}" for t, g in zip(self.inputs, self.grad_inputs)
        )
        return (
            f"step {self.index}: {self.op} -> {label(self.output)} "
            f"|grad_out|={norm(self.grad_output)} => {ins}"
        )

    __str__ = __repr__

    def explain(self) -> str:
        """Several lines: the op's formula, and the arrays that went in and came out."""
        from .debug import explain_step  # debug reads the graph; imported only when asked

        return explain_step(self)


def graph_order(root_nodes: list) -> list:
    """Every node reachable from `root_nodes`, each after the nodes that made its inputs.

    Depth-first with an explicit stack (a 20,000-op chain needs no recursion), visiting a
    node's inputs in their order, so the order follows the program (X before W in `X @ W`).
    The graph renderer numbers its nodes in this order.
    """
    order: list = []
    visited: set = set()
    for root in root_nodes:
        stack = [(root, False)]
        while stack:
            node, inputs_done = stack.pop()
            if inputs_done:
                order.append(node)
                continue
            if node in visited:
                continue
            visited.add(node)
            stack.append((node, True))
            for parent in reversed(node.parents):
                if not isinstance(parent, Tensor) and parent not in visited:
                    stack.append((parent, False))
    return order


def topological_order(root_node: Any) -> list:
    """The nodes reachable from `root_node`, each before the nodes that made its inputs: the
    order the backward pass visits them."""
    order = graph_order([root_node])
    order.reverse()
    return order


def sum_to_shape(grad: np.ndarray, shape: tuple, node: Any, position: int) -> np.ndarray:
    """Undo broadcasting: sum `grad` over the axes that broadcasting added or stretched."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    if lead < 0 or any(n != 1 and grad.shape[lead + i] != n for i, n in enumerate(shape)):
        raise RuntimeError(
            f"{node.name}.backward returned a gradient of shape {grad.shape} for input "
            f"{position}, whose shape is {shape}; the input's shape does not broadcast to it. A "
            "backward must return, per input, an array of that input's shape or of the "
            "broadcast output shape (a Python number only for a 0-d input)."
        )
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return grad.sum(axis=tuple(range(lead)) + stretched).reshape(shape)


def add_to_grad(tensor: Tensor, grad: np.ndarray) -> None:
    """`tensor.grad += grad`, where the first gradient is copied: it may be an op's or the
    caller's array, and later accumulation must not write into it."""
    if tensor._grad is None:
        tensor._grad = grad.copy()
    else:
        tensor._grad += grad


def accumulate(parent: Any, grad: Any, grads: dict, node: Any, position: int):
    """THE place gradients add up. `parent` is what the node's input came from: a leaf tensor
    (the gradient is added to its `.grad`) or the node that produced the input (the gradient
    waits in `grads` for that node's turn). `grad` is first summed to the input's shape
    (un-broadcasting) and cast to its dtype. Returns the reduced gradient."""
    leaf = isinstance(parent, Tensor)
    if leaf:
        shape, dtype = parent.data.shape, parent.data.dtype
    else:
        shape, dtype = parent.output_shape, parent.output_dtype
    if grad.__class__ is not np.ndarray:
        grad = np.asarray(grad)
        if grad.dtype.kind not in "fiub":
            raise TypeError(
                f"{node.name}.backward returned {grad.dtype} data for input {position}; return "
                "an ndarray of numbers (or None where no gradient flows)"
            )
    if grad.shape != shape:
        grad = sum_to_shape(grad, shape, node, position)
    if grad.dtype != dtype:
        grad = grad.astype(dtype)
    if leaf and not parent._hooks:
        add_to_grad(parent, grad)
        return grad
    previous = grads.get(parent)  # a node, or a leaf with hooks: they see the total, once
    grads[parent] = grad if previous is None else previous + grad
    return grad


def _made_by(root: Tensor) -> str:
    return f" (made by {root.grad_fn.name})" if root.grad_fn is not None else ""


def _root_gradient(root: Tensor, gradient: Any) -> np.ndarray:
    if not root.requires_grad:
        raise RuntimeError(
            f"backward(): this tensor (shape {root.shape}) does not require grad and has no "
            "grad_fn, so there is nothing to differentiate. Create the leaves you want "
            "gradients for with requires_grad=True, and do not compute it under no_grad()."
        )
    if gradient is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"backward(): the gradient can be implied only for a one-element output, but "
                f"this output{_made_by(root)} has shape {root.shape}. Reduce it first (e.g. "
                "out.sum().backward()) or pass gradient=<array of shape "
                f"{root.shape}>."
            )
        return np.ones(root.shape, dtype=root.dtype)
    given = gradient.data if isinstance(gradient, Tensor) else gradient
    try:
        gradient = np.asarray(given)
    except ValueError:  # a ragged list
        gradient = np.empty(0, dtype=object)
    if gradient.dtype.kind not in "fiub":
        raise TypeError(
            f"backward(gradient=...): the gradient must be numbers (an array of shape "
            f"{root.shape}), got {type(given).__name__} (NumPy reads it as {gradient.dtype})"
        )
    if gradient.shape != root.shape:
        raise RuntimeError(
            f"backward(gradient=...): the gradient has shape {gradient.shape} but the output "
            f"has shape {root.shape}; they must be equal. Pass the gradient of what you are "
            f"differentiating with respect to this output{_made_by(root)}: one number per "
            "output element."
        )
    return gradient.astype(root.dtype, copy=False)


def backward_steps(
    root: Tensor, gradient: Any = None, retain_graph: bool = False
) -> Iterator[BackwardStep]:
    """Run the backward pass from `root`, yielding one `BackwardStep` per node."""
    grad_root = _root_gradient(root, gradient)
    grads: dict = {}
    if root.grad_fn is None:
        accumulate(root, grad_root, grads, root, 0)
    else:
        grads[root.grad_fn] = grad_root
        index = 0  # counts the steps yielded: nodes no gradient reaches are skipped
        for node in topological_order(root.grad_fn):
            grad_out = grads.pop(node, None)
            if grad_out is None:
                continue  # every consumer of this node's output returned None for it
            if node.released:
                raise RuntimeError(
                    f"backward(): the graph was already released by an earlier backward() "
                    f"(reached {node.name}, output shape {node.output_shape}). Pass "
                    "retain_graph=True to the first backward() to run backward through the "
                    "same graph twice, or recompute the forward pass."
                )
            for hook in node.output_hooks:
                hooked = hook(grad_out)
                grad_out = grad_out if hooked is None else np.asarray(hooked)
            if node.retains_output_grad and node.output_ref() is not None:
                add_to_grad(node.output_ref(), grad_out)
            for callback in _observers.before_backward:
                callback(node, grad_out)
            grad_inputs = node.backward(node, grad_out)
            if grad_inputs.__class__ is not tuple:
                grad_inputs = (grad_inputs,)
            if len(grad_inputs) != len(node.parents):
                raise RuntimeError(
                    f"{node.name}.backward returned {len(grad_inputs)} gradient(s) for "
                    f"{len(node.parents)} input(s); return one entry per forward input, in "
                    "order, with None where no gradient flows."
                )
            reduced = []
            for position, (parent, needs, grad) in enumerate(
                zip(node.parents, node.needs_input_grad, grad_inputs)
            ):
                needed = needs and grad is not None
                reduced.append(accumulate(parent, grad, grads, node, position) if needed else None)
            grad_inputs = tuple(reduced)
            for callback in _observers.on_backward:
                callback(node, grad_out, grad_inputs)
            yield BackwardStep(index, node, grad_out, grad_inputs)
            index += 1
            if not retain_graph:
                node.release()
    for leaf, grad in grads.items():  # leaves with hooks: hooks see the total, as in PyTorch
        for hook in leaf._hooks:
            hooked = hook(grad)
            grad = grad if hooked is None else np.asarray(hooked, dtype=leaf.dtype)
        add_to_grad(leaf, grad)


from .function import observers as _observers  # noqa: E402  (function.py imports tensor.py)
