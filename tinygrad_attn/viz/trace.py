"""Reading a computation graph for drawing: which tensors and ops there are, and their edges.

`trace(*roots)` walks from the roots back through `grad_fn` and each node's `inputs`, with an
explicit stack (a graph of thousands of ops needs no recursion), and returns a `TracedGraph`:
tensor and op records numbered in traversal order, so the same program always gets the same
ids (never `id()`), and the edges between them in the order the program made them.

Identity: an intermediate tensor is identified by the node that produced it, so the live tensor
before backward and the `ReleasedTensor` a released graph keeps afterwards are the same record;
a leaf is identified by the tensor object itself, except a constant (an unnamed one-element
leaf that takes no gradient, like the 2 in `x * 2`), which gets a record per use.

This module only reads the graph: it must not change any node, tensor or gradient, and it knows
nothing about colours or DOT (dot.py does).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine import graph_order
from ..function import Function
from ..tensor import ReleasedTensor, Tensor


@dataclass(eq=False)
class TensorRecord:
    """One tensor of the picture.

    `kind` is "parameter" (a leaf that requires grad), "input" (a leaf that does not),
    "constant" (an unnamed one-element leaf that does not, e.g. the 2 in `x * 2`) or "tensor"
    (an op's output). `tensor` is the live Tensor (always for leaves; for an op's output only
    while it is alive), `op` the producing node of an op's output.
    """

    id: str
    kind: str
    name: str | None
    shape: tuple
    dtype: np.dtype
    requires_grad: bool
    tensor: Tensor | None = None
    op: Function | None = None
    scope: str | None = None
    is_root: bool = False


@dataclass(eq=False)
class OpRecord:
    """One op (a recorded `Function` node) of the picture, and the tensor it made."""

    id: str
    node: Function
    output: TensorRecord
    scope: str | None = None


@dataclass(frozen=True)
class Edge:
    """Data flowing from `src` to `dst` in the forward pass (ids of records).

    `differentiable` says whether a gradient flows back along it: always for an op's output
    edge, `node.needs_input_grad[position]` for an input edge. `position` is the input slot
    (None for an output edge), so `x * x` gives two edges.
    """

    src: str
    dst: str
    differentiable: bool
    position: int | None = None


@dataclass
class TracedGraph:
    """Everything reachable from the roots, in a stable order."""

    tensors: list[TensorRecord] = field(default_factory=list)
    ops: list[OpRecord] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    roots: list[TensorRecord] = field(default_factory=list)

    @property
    def scopes(self) -> set[str]:
        """Every module path that some op was made in, with all its dotted prefixes."""
        paths: set[str] = set()
        for op in self.ops:
            if op.scope:
                paths.update(scope_prefixes(op.scope))
        return paths


def scope_prefixes(path: str) -> list[str]:
    """ "a.b.c" -> ["a", "a.b", "a.b.c"]: the module and every module around it."""
    parts = path.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def flatten_roots(roots: Iterable[Any], caller: str) -> list:
    """The root tensors, in order, with lists and tuples of tensors opened up."""
    flat: list = []
    pending = list(roots)
    pending.reverse()
    while pending:
        item = pending.pop()
        if isinstance(item, (Tensor, ReleasedTensor)):
            flat.append(item)
        elif isinstance(item, (list, tuple)):
            pending.extend(reversed(item))
        else:
            raise TypeError(
                f"{caller}: expected Tensors to draw the graph from, got {type(item).__name__}. "
                "Pass the output(s) of your computation, e.g. to_dot(loss)."
            )
    if not flat:
        raise ValueError(f"{caller}: give at least one tensor to draw the graph from")
    return flat


def _ops_in_order(roots: list) -> list[Function]:
    """Every node reachable from the roots, each after all nodes that made its inputs, in
    program order (the engine's `graph_order`), so ids follow how the graph was built."""
    return graph_order([root.grad_fn for root in roots if root.grad_fn is not None])


def _leaf_kind(tensor: Tensor) -> str:
    if tensor.requires_grad:
        return "parameter"
    if tensor.name is None and tensor._data.size == 1:
        return "constant"
    return "input"


def _leaf_scope(record: TensorRecord, scopes: set[str], consumers: list) -> str | None:
    """Which module box a leaf is drawn in.

    A parameter named "attn.query.weight" goes in the "attn.query" box, if there is one. An
    unnamed leaf (a constant such as the 0.5 in GELU, or a value computed without grad inside
    a module) goes in the innermost box around every op that reads it. A named input (X)
    stays outside: it comes from the program, not from a module.
    """
    if record.name:
        parts = record.name.split(".")[:-1]
        while parts:
            path = ".".join(parts)
            if path in scopes:
                return path
            parts.pop()
        return None
    if not consumers or None in consumers:
        return None
    common = consumers[0].split(".")
    for scope in consumers[1:]:
        parts = scope.split(".")
        size = 0
        while size < min(len(common), len(parts)) and common[size] == parts[size]:
            size += 1
        common = common[:size]
    return ".".join(common) or None


def trace(*roots: Any) -> TracedGraph:
    """Collect the tensors, ops and edges reachable from `roots` (Tensors), with stable ids."""
    root_tensors = flatten_roots(roots, "trace")
    graph = TracedGraph()
    leaves: dict[int, TensorRecord] = {}  # id(leaf) -> record; the record keeps the leaf alive
    outputs: dict[Function, TensorRecord] = {}

    def leaf_record(tensor: Tensor) -> TensorRecord:
        record = leaves.get(id(tensor))
        if record is None:
            record = TensorRecord(
                id=f"t{len(graph.tensors)}",
                kind=_leaf_kind(tensor),
                name=tensor.name,
                shape=tuple(tensor.shape),
                dtype=tensor.dtype,
                requires_grad=tensor.requires_grad,
                tensor=tensor,
            )
            leaves[id(tensor)] = record
            graph.tensors.append(record)
        return record

    def constant_record(tensor: Tensor, reader: Function) -> TensorRecord:
        # One node per use, next to the op that reads it: a constant shared by every layer
        # (the eps of each LayerNorm) would otherwise tie the whole picture together.
        record = TensorRecord(
            id=f"t{len(graph.tensors)}",
            kind="constant",
            name=None,
            shape=tuple(tensor.shape),
            dtype=tensor.dtype,
            requires_grad=False,
            tensor=tensor,
            scope=reader.scope or None,
        )
        graph.tensors.append(record)
        return record

    for node in _ops_in_order(root_tensors):
        # The parents, not the input tensors: a tensor changed in place since has moved on to
        # a newer node, but this node read what its parent made.
        parents = node.parents
        sources: list[TensorRecord] = []  # one per input
        for parent in parents:
            if isinstance(parent, Function):
                sources.append(outputs[parent])
            elif _leaf_kind(parent) == "constant":
                sources.append(constant_record(parent, node))
            else:
                sources.append(leaf_record(parent))
        alive = node.output_ref()
        output = TensorRecord(
            id=f"t{len(graph.tensors)}",
            kind="tensor",
            name=alive.name if alive is not None else node.output_name,
            shape=tuple(node.output_shape),
            dtype=node.output_dtype,
            requires_grad=True,
            tensor=alive,
            op=node,
            scope=node.scope or None,  # "" is the outermost module: no box of its own
        )
        op = OpRecord(id=f"op{len(graph.ops)}", node=node, output=output, scope=output.scope)
        graph.tensors.append(output)
        graph.ops.append(op)
        outputs[node] = output
        for position, (source, needs) in enumerate(zip(sources, node.needs_input_grad)):
            graph.edges.append(Edge(source.id, op.id, bool(needs), position))
        graph.edges.append(Edge(op.id, output.id, True))

    for tensor in root_tensors:
        record = outputs[tensor.grad_fn] if tensor.grad_fn is not None else leaf_record(tensor)
        if not record.is_root:
            record.is_root = True
            graph.roots.append(record)

    scopes = graph.scopes
    consumers: dict[str, list[str | None]] = {}  # leaf id -> scopes of the ops that read it
    for op in graph.ops:
        for parent in op.node.parents:
            if not isinstance(parent, Function) and id(parent) in leaves:
                consumers.setdefault(leaves[id(parent)].id, []).append(op.scope)
    for record in leaves.values():
        record.scope = _leaf_scope(record, scopes, consumers.get(record.id, []))
    return graph
