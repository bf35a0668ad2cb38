"""What is drawn: which records of a traced graph become which node of the picture.

A traced graph has one record per tensor and per op. The picture a person reads has fewer
nodes, by three rules (all undone by `all_ops=True`, which draws every primitive op, every
constant and every intermediate tensor):

1. **Collapse**: everything made inside a collapsed module is one box (`collapse=`,
   `collapse_depth=`, or, when neither is given and the picture would have more than
   `max_nodes` nodes, the deepest module depth that fits; `expand=` keeps modules open).
2. **Steps, not plumbing**: an op whose result has no name and is read by exactly one op of
   the same module is drawn inside that op's node (the weight Transpose inside `x Wᵀ`, the raw
   `Q Kᵀ` inside the scaled scores, the squared error's steps inside the loss). The node is
   labelled with the formula of its ops (`mean((output[5] − target)²)`; formula.py). A
   change made in place (`y.mul_(2)`) is always a node of its own, headed `mul_ (in place)`.
3. **Results inside their ops**: an op's output tensor is drawn in the op's node (its name,
   shape and values), and a one-element constant is written into its op's formula.

A gradient made with `backward(create_graph=True)` has a graph of its own, whose ops a backward
pass made (`node.made_by`, e.g. "Softmax.backward"). Such an op is never drawn in the same node
as an op of the program, nor as an op of another op's backward (formula.py's `backward_source`
says whose backward made a node), and what flows out of it is a gradient when it reads one
(`Picture.carries_gradient`; a fused op's backward that computes its forward again makes
values). Those ops keep the module of the op they differentiate (`node.scope`), so a collapsed
module is two boxes, its forward ops and its backward's (`ModuleBox.backward`, drawn outside
the module's cluster). A picture holding such ops draws the forward pass only unless asked
(`resolve_passes`): the backward's own arrows are then its ops' edges, and red twins pointing
back would mean nothing.

This module only decides what is drawn; dot.py draws it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .formula import gradient_letter, index_text, wrap
from .trace import OpRecord, TensorRecord, TracedGraph, scope_prefixes


@dataclass
class ModuleBox:
    """A collapsed module: its drawn id, and what it holds."""

    id: str
    path: str
    backward: bool = False  # the ops a backward pass made for the module's ops (create_graph)
    ops: int = 0
    params: int = 0
    elements: int = 0


@dataclass
class Resolved:
    """The collapse decision for one picture (after `auto`)."""

    collapse: tuple[str, ...] = ()
    collapse_depth: int | None = None
    expand: tuple[str, ...] = ()
    auto: bool = False  # chosen by the max_nodes rule, not by the user


def made_by_backward(op: OpRecord) -> bool:
    """An op that a backward pass made (`backward(create_graph=True)`), not the program."""
    return op.node.made_by is not None


def resolve_passes(traced: TracedGraph, options):
    """`options` with `passes` decided: None (the default) is "forward" for a graph that holds
    ops of a backward pass (the picture of a gradient: its own edges already run the way the
    gradient flows), "both" for any other graph."""
    if options.passes is not None:
        return options
    backward = any(made_by_backward(op) for op in traced.ops)
    return replace(options, passes="forward" if backward else "both")


def _shown_names(traced: TracedGraph, readers: dict) -> tuple[dict, set]:
    """Names for what a gradient's graph holds unnamed: a result that is the `.grad` of a leaf
    of the picture (`query.weight.grad`), and a tensor only its backward's ops read that
    holds a named tensor's array, or a view of it (`Xᵀ`: the backward of `X Wᵀ` reads X
    transposed), else `c`, `c₂`, ... (a value it computed from what takes no gradient). An
    ordinary graph gets none. Returns (record id -> name, the ids named c...)."""
    names: dict[str, str] = {}
    computed: set[str] = set()
    if not any(made_by_backward(op) for op in traced.ops):
        return names, computed
    leaves = [r for r in traced.tensors if r.op is None and r.name and r.tensor is not None]
    grads = {id(r.tensor._grad): r.name for r in leaves if r.tensor._grad is not None}
    for op in traced.ops:
        tensor = op.output.tensor
        if tensor is not None and op.output.name is None and id(tensor) in grads:
            names[op.output.id] = f"{grads[id(tensor)]}.grad"

    def name_of(tensor) -> str | None:  # its own name, or that of the leaf whose array it holds
        if tensor.name:
            return tensor.name
        return next((r.name for r in leaves if r.tensor._data is tensor._data), None)

    for record in traced.tensors:
        if record.name or record.kind != "input" or record.tensor is None:
            continue
        read_by = readers.get(record.id, [])
        if not read_by or not all(made_by_backward(op) for op in read_by):
            continue
        base = getattr(record.tensor, "_base", None)
        chain = getattr(record.tensor, "_view_chain", None)
        if base is None:
            name = name_of(record.tensor)
        else:
            name = name_of(base)
            name = _view_name(name, chain) if name and chain else None
        if name is None:  # computed by the backward from what takes no gradient: c, c₂, ...
            name = "c" + gradient_letter(len(computed))[1:]
            computed.add(record.id)
        names[record.id] = name
    return names, computed


def _gradients(traced: TracedGraph, readers: dict, inputs_of: dict, computed: set) -> set[str]:
    """The ids of the tensors (and of the ops, for their output edges) that hold gradients: the
    results of a backward's ops that read a gradient, starting from what the backward pass
    computed without a graph (the seed's share, `c`) or a leaf only its ops read (a
    `grad_outputs` that requires grad). A backward's op that reads only forward values (a
    fused op's backward computing its forward again) makes a value, not a gradient."""
    seeds = set(computed)
    for record in traced.tensors:
        read_by = readers.get(record.id, [])
        if record.op is None and record.requires_grad and read_by:
            if all(made_by_backward(op) for op in read_by):
                seeds.add(record.id)
    gradients: set[str] = set()
    for op in traced.ops:  # (inputs first)
        sources = inputs_of.get(op.id, [])
        if made_by_backward(op) and any(s in gradients or s in seeds for s in sources):
            gradients.update((op.output.id, op.id))
    return gradients


def _view_name(base: str, chain: tuple) -> str | None:
    """`Xᵀ` or `X[5]`: a view written from its base's name and the ops that lead there (None
    for a view that cannot be written so)."""
    text = base
    for op, params in chain:
        axes = tuple(params.get("axes") or ())
        n = len(axes)
        if op.__name__ == "Transpose" and n >= 2 and axes == (*range(n - 2), n - 1, n - 2):
            text = f"{wrap(text)}ᵀ"
        elif op.__name__ == "GetItem":
            text = f"{wrap(text)}[{index_text(params.get('index'))}]"
        else:
            return None
    return text


def _attends(node) -> bool:
    """An op that computes attention weights: a softmax, or the fused attention."""
    return node.name in ("Softmax", "ScaledDotProductAttention")


def check_module_names(traced: TracedGraph, names: tuple[str, ...], option: str, caller: str):
    """A ValueError naming the known module paths if a name in `names` is not one of them."""
    known = traced.scopes
    unknown = [name for name in names if name not in known]
    if unknown:
        listed = ", ".join(sorted(known)[:40]) or "none: no op of this graph was made in a module"
        raise ValueError(
            f"{caller}: {option}={unknown[0]!r} is not a module of this graph; the modules are: "
            f"{listed}"
        )


class Picture:
    """The nodes and edges that will be drawn (see the module doc)."""

    def __init__(self, traced: TracedGraph, options, collapse: Resolved | None = None) -> None:
        self.traced = traced
        self.options = options
        self.collapse = collapse or Resolved(options.collapse, options.collapse_depth)
        self.owner: dict[str, str | None] = {}  # record id -> drawn node id (None: not drawn)
        self.modules: dict[tuple[str, bool], ModuleBox] = {}  # (path, backward?) -> box
        self.boxes: dict[str, ModuleBox] = {}  # box id -> box
        self.scope_of: dict[str, str | None] = {}  # drawn node id -> cluster path
        self.groups: dict[str, list[OpRecord]] = {}  # drawn op node -> its ops, program order
        self.producer = {op.output.id: op for op in traced.ops}  # tensor id -> op that made it
        self.tensors = {record.id: record for record in traced.tensors}
        self.readers: dict[str, list[OpRecord]] = {}  # tensor id -> ops reading it, per edge
        self.inputs_of: dict[str, list[str]] = {}  # op id -> ids of its inputs, in order
        op_by_id = {op.id: op for op in traced.ops}
        for edge in traced.edges:
            if edge.position is not None:
                self.readers.setdefault(edge.src, []).append(op_by_id[edge.dst])
                self.inputs_of.setdefault(edge.dst, []).append(edge.src)
        # traced edge index -> id of the drawn green/blue or red edge (None: not drawn)
        self.forward_edge_ids: list[str | None] = [None] * len(traced.edges)
        self.backward_edge_ids: list[str | None] = [None] * len(traced.edges)
        self.legend: str | None = None  # the legend's label, once dot.py has drawn it
        # modules whose own ops attend (a softmax, the fused attention): see collapsed_path
        self.attending = {op.scope for op in traced.ops if op.scope and _attends(op.node)}
        # names for a gradient's unnamed tensors (`names`), and which are values its backward
        # computed without a graph (`computed`); what flows out of its ops (`gradients`)
        self.names, self.computed = _shown_names(traced, self.readers)
        self.gradients = _gradients(traced, self.readers, self.inputs_of, self.computed)
        self._assign_owners()

    # ------------------------------------------------------------------ collapse
    def collapsed_path(self, scope: str | None) -> str | None:
        """The outermost collapsed module that contains `scope`, if any."""
        if not scope:
            return None
        rule = self.collapse
        for path in scope_prefixes(scope):
            if any(e == path or e.startswith(path + ".") for e in rule.expand):
                continue  # an expanded module, or one around it: open
            if (
                rule.auto
                and path in self.attending
                and any(path.startswith(e + ".") for e in rule.expand)
            ):
                continue  # inside an expanded module, the attention itself stays in sight
            if path in rule.collapse:
                return path
            if rule.collapse_depth is not None and path.count(".") + 1 >= rule.collapse_depth:
                return path
        return None

    def _module_box(self, path: str, backward: bool = False) -> ModuleBox:
        """The box of collapsed module `path`: its forward ops, or (`backward`) the ops its
        backward pass made, a box of its own outside the module's cluster."""
        box = self.modules.get((path, backward))
        if box is None:
            box = self.modules[path, backward] = ModuleBox(f"m{len(self.modules)}", path, backward)
            self.boxes[box.id] = box
            self.scope_of[box.id] = None if backward else path.rpartition(".")[0] or None
        return box

    # ------------------------------------------------------------------ owners
    def _assign_owners(self) -> None:
        options = self.options
        plumbing = options.all_ops
        for op in self.traced.ops:
            path = self.collapsed_path(op.scope)
            if path is not None:
                box = self._module_box(path, made_by_backward(op))
                self.owner[op.id] = box.id
                box.ops += 1
        # Rule 2, consumers first: an op joins the node of the one op that reads its result.
        for op in reversed(self.traced.ops):
            if op.id in self.owner:
                continue
            reader = None if plumbing else self._only_reader(op)
            self.owner[op.id] = self.owner[reader.id] if reader is not None else op.id
        for op in self.traced.ops:
            node = self.owner[op.id]
            if not node.startswith("m"):
                self.groups.setdefault(node, []).append(op)
                self.scope_of[node] = None if made_by_backward(op) else op.scope
        intermediates = options.intermediates if options.intermediates is not None else plumbing
        for record in self.traced.tensors:
            self._assign_tensor(record, intermediates)

    def _only_reader(self, op: OpRecord) -> OpRecord | None:
        out = op.output
        if out.is_root or out.name or op.node.inplace:  # a change in place: a node of its own
            return None
        readers = {id(r): r for r in self.readers.get(out.id, [])}
        if len(readers) != 1:
            return None
        (reader,) = readers.values()
        if reader.scope != op.scope or self.owner.get(reader.id, "").startswith("m"):
            return None
        if reader.node.inplace or reader.node.made_by != op.node.made_by:
            return None  # (an op of the program and one of a backward: two nodes; see above)
        if op.node.made_by and reader.node.name == op.node.name:
            return None  # (a matmul read by a matmul: most likely two matmuls' backwards)
        return reader

    def _assign_tensor(self, record: TensorRecord, intermediates: bool) -> None:
        options = self.options
        if options.passes == "backward" and not record.requires_grad:
            self.owner[record.id] = None
            return
        path = self.collapsed_path(record.scope)
        backward = self._backward_made(record)
        if path is not None and not record.is_root:
            box = self._module_box(path, backward)
            self.owner[record.id] = box.id
            if record.kind == "parameter":
                box.params += 1
                box.elements += int(np.prod(record.shape, dtype=np.int64))
            return
        if record.op is not None:
            producer = self.producer[record.id]
            group = self.owner[producer.id]
            if group.startswith("m"):  # a root made inside a collapsed module: its own node
                self.owner[record.id] = record.id
                self.scope_of[record.id] = None
                return
            if not intermediates or self.groups[group][-1] is not producer:
                self.owner[record.id] = group
                return
        elif record.kind == "constant" and not options.all_ops:
            readers = self.readers.get(record.id, [])
            if len(readers) == 1 and not self.owner[readers[0].id].startswith("m"):
                self.owner[record.id] = self.owner[readers[0].id]  # written in its formula
                return
        self.owner[record.id] = record.id
        self.scope_of[record.id] = None if backward else record.scope

    def _backward_made(self, record: TensorRecord) -> bool:
        """Whether a backward pass made `record`, or (a leaf) only a backward's ops read it."""
        producer = self.producer.get(record.id)
        if producer is not None:
            return made_by_backward(producer)
        readers = self.readers.get(record.id, [])
        return bool(readers) and all(map(made_by_backward, readers))

    def node_count(self) -> int:
        return len({node for node in self.owner.values() if node is not None})

    def columns(self) -> int:
        """About how many columns (ranks) the layout has: the longest chain of drawn nodes."""
        depth: dict[str, int] = {}
        for edge in self.traced.edges:
            src, dst = self.owner[edge.src], self.owner[edge.dst]
            if src is None or dst is None or src == dst:
                continue
            depth[dst] = max(depth.get(dst, 0), depth.get(src, 0) + 1)
        return max(depth.values(), default=0) + 1

    def output_of(self, node: str) -> TensorRecord:
        """The tensor an op node made (the result of its last op)."""
        return self.groups[node][-1].output

    def carries_gradient(self, source: str) -> bool:
        """Whether what flows out of `source` (a tensor's id, or an op's id for its output
        edge) is a gradient: the result of a backward's op that reads one (`_gradients`)."""
        return source in self.gradients

    # ------------------------------------------------------------------ edges
    def edges(self, colours: dict) -> list[tuple[str, str, dict]]:
        """(tail, head, attributes) for every edge drawn, forward ones before their twins.
        `colours`: {"forward": ..., "backward": ..., "no_grad": ..., "gradient": ...}; a
        "gradient" edge carries the result of a backward's op the way it flows (dashed when
        the red twins of a backward pass are drawn too)."""
        options = self.options
        drawn: list[tuple[str, str, dict]] = []
        merged: dict = {}  # (src, dst, kind) -> id of the one edge drawn for them
        used: set[str] = set()
        tags = {"forward": "f", "no_grad": "n", "gradient": "g", "backward": "b"}
        for index, edge in enumerate(self.traced.edges):
            src, dst = self.owner[edge.src], self.owner[edge.dst]
            if src is None or dst is None or src == dst:
                continue
            merge = not options.all_ops or src != edge.src or dst != edge.dst
            kinds = []
            if options.passes != "backward":
                if self.carries_gradient(edge.src):
                    kinds.append("gradient")
                else:
                    kinds.append("forward" if edge.differentiable else "no_grad")
            if options.passes != "forward" and edge.differentiable:
                kinds.append("backward")
            source = self.tensors.get(edge.src)
            for kind in kinds:
                attrs = {"color": colours[kind]}
                if source is not None and source.kind in ("parameter", "input"):
                    # pulls each leaf next to its op (X beside the Q, K and V layers, in one column)
                    attrs["weight"] = "4"
                red = kind == "backward"
                ids = self.backward_edge_ids if red else self.forward_edge_ids
                key = (src, dst, kind)
                if merge and key in merged:  # parallel edges: one per kind
                    ids[index] = merged[key]
                    continue
                edge_id = ids[index] = _edge_id(src, dst, tags[kind], used)
                merged[key] = edge_id
                if red:
                    attrs["dir"] = "back"
                elif kind == "gradient" and options.passes != "forward":
                    attrs["style"] = "dashed"  # (beside the red twins that point back)
                if options.element_ids:
                    attrs["id"] = edge_id
                drawn.append((src, dst, attrs))
        return drawn


def _edge_id(src: str, dst: str, tag: str, used: set[str]) -> str:
    """`t0-op0-b` (red, pointing back), `-f` (green), `-n` (blue) or `-g` (a gradient the way
    it flows); `x * x` gets `-2` on its second edge."""
    base = f"{src}-{dst}-{tag}"
    edge_id, count = base, 1
    while edge_id in used:
        count += 1
        edge_id = f"{base}-{count}"
    used.add(edge_id)
    return edge_id


MAX_COLUMNS = 14  # beyond this many columns, a picture shown 880 px wide has unreadable text


def resolve_collapse(traced: TracedGraph, options, caller: str) -> Resolved:
    """Check the module names the user gave, and pick the automatic collapse depth: the
    deepest that keeps the picture within `max_nodes` nodes and `MAX_COLUMNS` columns."""
    check_module_names(traced, options.collapse, "collapse", caller)
    check_module_names(traced, options.expand, "expand", caller)
    rule = Resolved(options.collapse, options.collapse_depth, options.expand)
    if options.collapse or options.collapse_depth is not None or options.max_nodes is None:
        return rule
    # every primitive op is asked for: many columns are expected, only the count matters
    columns = None if options.all_ops else MAX_COLUMNS

    def fits(picture: Picture) -> bool:
        small = picture.node_count() <= options.max_nodes
        return small and (columns is None or picture.columns() <= columns)

    first = Picture(traced, options, rule)
    if fits(first):
        return rule
    deepest = max((path.count(".") + 1 for path in traced.scopes), default=0)
    small = []  # (columns, candidate) of the pictures within max_nodes, deepest first
    if first.node_count() <= options.max_nodes:
        small.append((first.columns(), rule))
    for depth in range(deepest, 0, -1):
        candidate = Resolved((), depth, options.expand, auto=True)
        picture = Picture(traced, options, candidate)
        if fits(picture):
            return candidate
        if picture.node_count() <= options.max_nodes:
            small.append((picture.columns(), candidate))
    if small:  # too many columns at every depth: the least collapsed of the narrowest
        fewest = min(columns for columns, _ in small)
        return next(candidate for columns, candidate in small if columns == fewest)
    return Resolved((), 1, options.expand, auto=True)
