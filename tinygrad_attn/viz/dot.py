"""From a traced graph to a Graphviz picture: colours, node styles, legend, clusters, collapse.

The picture follows the reference article's diagrams, left to right (rankdir=LR):

- forward edges are GREEN: the value flows from a tensor into an op, or out of an op;
- backward edges are RED, one twin per differentiable forward edge, with the arrowhead at the
  tensor the gradient flows into (they are written `tensor -> op [dir=back]`, so the layout
  stays left to right while the arrow points from the loss back to the parameters);
- edges carrying data that takes no gradient (the input X, masks, constants) are BLUE and have
  no red twin: a red edge never reaches X.

Node shapes: ops are grey ellipses; parameters (leaves that require grad) yellow boxes; inputs
blue boxes; constants small dashed boxes; intermediate tensors white rounded boxes; the roots
(e.g. the loss) have a double border; a collapsed module is one purple 3-D box. Ops made while a
module was being called sit in nested clusters named by the module path, and a module can be
collapsed (by path prefix or by depth) into one box.

This module must not trace the graph (trace.py does) nor run a renderer (render.py does).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, fields
from typing import Any

import graphviz
import numpy as np

from .trace import OpRecord, TensorRecord, TracedGraph, scope_prefixes

# Hex colours, so that the SVG and the PNG (and every renderer) agree.
GREEN = "#2ca02c"  # forward: values
RED = "#d62728"  # backward: gradients
BLUE = "#1f77b4"  # data that takes no gradient

_FILL = {
    "op": "#e8e8e8",
    "parameter": "#fff2b3",
    "input": "#d6e6f5",
    "constant": "#f4f4f4",
    "tensor": "#ffffff",
    "module": "#e6dcf5",
}
_FONT = "Helvetica"
_SMALL = 9  # point size of the shape/dtype and value lines

# Attributes every Function has; whatever else forward set on the ctx (axis, scale...) is the
# op's parameters, shown under its name.
_NODE_ATTRIBUTES = frozenset(
    {
        "inputs",
        "parents",
        "needs_input_grad",
        "output_ref",
        "output_shape",
        "output_dtype",
        "output_name",
        "scope",
        "creation_site",
        "released",
        "output_hooks",
        "retains_output_grad",
        "sequence",
        "has_hooks",
        "shape",
        "dtype",
        "input_shape",
        "input_dtype",
    }
)


@dataclass(frozen=True)
class DrawOptions:
    """What a picture shows. Every field is a keyword of to_dot / draw_graph / render_graph.

    - `passes`: "both" (default), "forward" (green and blue edges) or "backward" (red edges
      only; leaves that take no gradient are left out).
    - `show_values`, `show_grads`: print values / gradients on tensor nodes (arrays of at most
      `max_elements` elements in full, larger ones as shape and min/mean/max). An
      intermediate's value is there only while the program still holds that tensor.
    - `show_saved`: list the arrays each op saved for backward and their size.
    - `show_params`: the op's own parameters under its name (axis, scale, ...).
    - `intermediates`: draw intermediate tensors as nodes of their own (default); False folds
      each into the op that made it (half as many nodes).
    - `clusters`: group ops by the module that made them (nested boxes named by module path).
    - `collapse`: a module path or a list of them ("attn", "blocks.0"): everything made inside
      is drawn as one box. `collapse_depth`: collapse every module at that depth of the path
      ("blocks.0" is depth 2).
    - `title`: a line above the legend.
    - `element_ids`: give every node and edge an `id` attribute that the SVG keeps (a node's
      id is its DOT name, an edge's the one `drawn_ids` reports), so a page can script the
      picture (viz/replay.py does).
    """

    passes: str = "both"
    show_values: bool = False
    show_grads: bool = False
    show_saved: bool = False
    show_params: bool = True
    intermediates: bool = True
    clusters: bool = True
    collapse: tuple[str, ...] = ()
    collapse_depth: int | None = None
    max_elements: int = 12
    title: str | None = None
    element_ids: bool = False

    @classmethod
    def from_keywords(cls, caller: str, **options: Any) -> DrawOptions:
        """Check the keywords a user gave and turn them into options."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(
                f"{caller}: unknown option(s) {', '.join(unknown)}; the options are "
                f"{', '.join(sorted(known))}"
            )
        collapse = options.get("collapse")
        if collapse is None:
            options["collapse"] = ()
        elif isinstance(collapse, str):
            options["collapse"] = (collapse,)
        else:
            options["collapse"] = tuple(collapse)
        result = cls(**options)
        if result.passes not in ("both", "forward", "backward"):
            raise ValueError(
                f"{caller}: passes={result.passes!r}; use 'both', 'forward' or 'backward'"
            )
        if result.collapse_depth is not None and result.collapse_depth < 1:
            raise ValueError(
                f"{caller}: collapse_depth must be 1 or more, got {result.collapse_depth}"
            )
        return result


# ----------------------------------------------------------------------------- labels
def _text(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _shape_line(shape: tuple, dtype: Any) -> str:
    return f"{tuple(shape)} {np.dtype(dtype).name}"


def describe_array(array: np.ndarray, max_elements: int) -> str:
    """Small arrays in full (3 significant digits), larger ones as min / mean / max."""
    array = np.asarray(array)
    if array.ndim == 0:
        return f"{array.item():.4g}" if array.dtype.kind in "fc" else str(array.item())
    if array.size <= max_elements:
        return np.array2string(array, precision=3, separator=", ", max_line_width=48)
    values = array.astype(np.float64)
    return f"min {values.min():.3g}  mean {values.mean():.3g}  max {values.max():.3g}"


def _lines(rows: list[tuple[str, int | None, str | None]]) -> str:
    """An HTML-like label from (text, point size, colour) rows; text is escaped here."""
    parts = []
    for text, size, colour in rows:
        body = "<br/>".join(_text(line) for line in text.split("\n"))
        attrs = ""
        if size is not None:
            attrs += f' point-size="{size}"'
        if colour is not None:
            attrs += f' color="{colour}"'
        parts.append(f"<font{attrs}>{body}</font>" if attrs else body)
    return "<" + "<br/>".join(parts) + ">"


def _plain(text: str) -> tuple[str, None, None]:
    """A label row in the node's own font (the op's or module's name)."""
    return (text, None, None)


def _array_rows(record: TensorRecord, options: DrawOptions) -> list:
    rows: list = []
    tensor = record.tensor
    if options.show_values:
        if tensor is None:
            # Only the op's saved arrays keep an intermediate's data: once the tensor itself
            # is gone (dropped by the program, or released by backward) there is no value.
            rows.append(("value not kept (tensor is gone)", _SMALL, "#777777"))
        else:
            rows.append(("= " + describe_array(tensor.data, options.max_elements), _SMALL, None))
    if options.show_grads and record.requires_grad:
        grad = None if tensor is None else tensor._grad  # ._grad: .grad warns on non-leaves
        if grad is not None:
            rows.append(("grad " + describe_array(grad, options.max_elements), _SMALL, RED))
        elif record.kind == "parameter":
            rows.append(("grad: none yet", _SMALL, RED))
    return rows


def _tensor_label(record: TensorRecord, options: DrawOptions) -> str:
    if record.kind == "constant":
        value = describe_array(record.tensor.data, options.max_elements)
        return _lines([(value, _SMALL, None)])
    rows: list = []
    if record.name:
        rows.append((record.name, None, None))
    rows.append((_shape_line(record.shape, record.dtype), _SMALL, "#444444"))
    rows.extend(_array_rows(record, options))
    return _lines(rows)


def _op_params(op: OpRecord) -> str:
    """The simple attributes forward set on the ctx (axis=-1, scale=0.5), in a stable order."""
    shown = []
    for key in sorted(vars(op.node)):
        if key.startswith("_") or key in _NODE_ATTRIBUTES:
            continue
        value = vars(op.node)[key]
        if isinstance(value, str):
            shown.append(f"{key}={value[:24]}")
        elif isinstance(value, (bool, int, np.integer)) or value is None:
            shown.append(f"{key}={value}")
        elif isinstance(value, (float, np.floating)):
            shown.append(f"{key}={value:.3g}")
        elif (
            isinstance(value, tuple)
            and len(value) <= 4
            and all(isinstance(v, (int, np.integer)) for v in value)
        ):
            shown.append(f"{key}={tuple(int(v) for v in value)}")
    return " ".join(shown)


def _saved_line(op: OpRecord) -> str:
    node = op.node
    if node.released:
        return "saved: freed by backward"
    arrays = [a for a in node._saved if isinstance(a, np.ndarray)]
    if not arrays:
        return "saved: nothing"
    shapes = ", ".join(str(tuple(a.shape)) for a in arrays)
    total = sum(a.nbytes for a in arrays)
    return f"saved: {shapes} = {_bytes(total)}"


def _bytes(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024**2:
        return f"{count / 1024:.1f} KiB"
    return f"{count / 1024**2:.1f} MiB"


def _op_label(op: OpRecord, options: DrawOptions, folded: bool) -> str:
    rows: list = [_plain(op.node.name)]
    if options.show_params:
        params = _op_params(op)
        if params:
            rows.append((params, _SMALL, "#444444"))
    if folded:
        out = op.output
        name = f"{out.name} " if out.name else ""
        rows.append((f"-> {name}{_shape_line(out.shape, out.dtype)}", _SMALL, "#444444"))
        rows.extend(_array_rows(out, options))
    if options.show_saved:
        rows.append((_saved_line(op), _SMALL, "#6a3d9a"))
    return _lines(rows)


def _op_tooltip(op: OpRecord) -> str:
    """Where the op was made (when recorded) and its formula, shown on hover in an SVG."""
    doc = " ".join((type(op.node).__doc__ or "").split())
    site = op.node.creation_site
    parts = [f"created at {site}" if site else "", doc]
    text = "\\n".join(part.replace("\\", "\\\\") for part in parts if part)  # DOT escapes
    return text or op.node.name


def _legend(options: DrawOptions, has_modules: bool) -> str:
    """The graph's label: a small table of what the colours and shapes mean."""

    def swatch(colour: str, text: str, arrow: str = "--&gt;") -> str:
        return (
            f'<tr><td><font color="{colour}"><b>{arrow}</b></font></td>'
            f'<td align="left"><font color="{colour}">{text}</font></td></tr>'
        )

    def box(kind: str, text: str) -> str:
        return f'<tr><td border="1" bgcolor="{_FILL[kind]}"> </td><td align="left">{text}</td></tr>'

    rows = []
    if options.title:
        rows.append(f'<tr><td colspan="2" align="left"><b>{_text(options.title)}</b></td></tr>')
    if options.passes != "backward":
        rows.append(swatch(GREEN, "forward pass (values)"))
    if options.passes != "forward":
        rows.append(swatch(RED, "backward pass (gradients)", "&lt;--"))
    if options.passes != "backward":
        rows.append(swatch(BLUE, "data that takes no gradient"))
    rows.append(box("parameter", "parameter (requires grad)"))
    if options.passes != "backward":
        rows.append(box("input", "input / constant (no grad)"))
    rows.append(box("op", "op"))
    if has_modules:
        rows.append(box("module", "collapsed module"))
    return (
        '<<table border="0" cellborder="0" cellspacing="3" cellpadding="1">'
        + "".join(rows)
        + "</table>>"
    )


# ----------------------------------------------------------------------------- layout
def _collapsed_path(scope: str | None, options: DrawOptions) -> str | None:
    """The outermost collapsed module that contains `scope`, if any."""
    if not scope:
        return None
    for path in scope_prefixes(scope):
        if path in options.collapse:
            return path
        if options.collapse_depth is not None and path.count(".") + 1 == options.collapse_depth:
            return path
    return None


class _Picture:
    """The nodes and edges that will be drawn, after collapsing and folding."""

    def __init__(self, traced: TracedGraph, options: DrawOptions) -> None:
        self.traced = traced
        self.options = options
        self.owner: dict[str, str | None] = {}  # record id -> drawn node id (None: not drawn)
        self.modules: dict[str, dict] = {}  # collapsed path -> {"id", "ops", "params"}
        self.scope_of: dict[str, str | None] = {}  # drawn node id -> cluster path
        self.producer = {op.output.id: op for op in traced.ops}  # tensor id -> op that made it
        # traced edge index -> id of the drawn green/blue or red edge (None: not drawn)
        self.forward_edge_ids: list[str | None] = [None] * len(traced.edges)
        self.backward_edge_ids: list[str | None] = [None] * len(traced.edges)
        self._assign_owners()

    def _module_box(self, path: str) -> str:
        module = self.modules.get(path)
        if module is None:
            module = {"id": f"m{len(self.modules)}", "ops": 0, "params": 0, "elements": 0}
            self.modules[path] = module
            parent = path.rpartition(".")[0]
            self.scope_of[module["id"]] = parent or None
        return module["id"]

    def _assign_owners(self) -> None:
        options = self.options
        drops_no_grad = options.passes == "backward"
        for op in self.traced.ops:
            path = _collapsed_path(op.scope, options)
            if path is not None:
                self.owner[op.id] = self._module_box(path)
                self.modules[path]["ops"] += 1
            else:
                self.owner[op.id] = op.id
                self.scope_of[op.id] = op.scope
        for record in self.traced.tensors:
            if drops_no_grad and not record.requires_grad:
                self.owner[record.id] = None
                continue
            path = _collapsed_path(record.scope, options)
            if path is not None and not record.is_root:
                self.owner[record.id] = self._module_box(path)
                if record.kind == "parameter":
                    self.modules[path]["params"] += 1
                    self.modules[path]["elements"] += int(np.prod(record.shape, dtype=np.int64))
            elif record.op is not None and not options.intermediates and not record.is_root:
                self.owner[record.id] = self.owner[self.producer[record.id].id]
            else:
                self.owner[record.id] = record.id
                self.scope_of[record.id] = record.scope

    def edges(self) -> list[tuple[str, str, dict]]:
        """(tail, head, attributes) for every edge drawn, forward ones before their twins."""
        options = self.options
        drawn: list[tuple[str, str, dict]] = []
        merged: dict = {}  # (src, dst, colour) -> id of the one edge drawn for them
        used: set[str] = set()
        for index, edge in enumerate(self.traced.edges):
            src, dst = self.owner[edge.src], self.owner[edge.dst]
            if src is None or dst is None or src == dst:
                continue
            remapped = src != edge.src or dst != edge.dst
            candidates = []
            if options.passes != "backward":
                colour = GREEN if edge.differentiable else BLUE
                candidates.append((colour, {"color": colour}))
            if options.passes != "forward" and edge.differentiable:
                candidates.append((RED, {"color": RED, "dir": "back"}))
            for colour, attrs in candidates:
                ids = self.backward_edge_ids if colour == RED else self.forward_edge_ids
                key = (src, dst, colour)
                if remapped and key in merged:  # many edges into one box: one per colour
                    ids[index] = merged[key]
                    continue
                edge_id = ids[index] = _edge_id(src, dst, colour, used)
                if remapped:
                    merged[key] = edge_id
                if options.element_ids:
                    attrs = {**attrs, "id": edge_id}
                drawn.append((src, dst, attrs))
        return drawn


def _edge_id(src: str, dst: str, colour: str, used: set[str]) -> str:
    """`t0-op0-b` (red), `-f` (green) or `-n` (blue); `x * x` gets `-2` on its second edge."""
    base = f"{src}-{dst}-" + {GREEN: "f", RED: "b", BLUE: "n"}[colour]
    edge_id, count = base, 1
    while edge_id in used:
        count += 1
        edge_id = f"{base}-{count}"
    used.add(edge_id)
    return edge_id


@dataclass(frozen=True)
class DrawnIds:
    """Where each traced record ended up in the picture (see `drawn_ids`).

    `nodes`: record id (`t3`, `op5`) -> id of the node drawn for it (itself, the op it is
    folded into, or a collapsed module box `m0`), None if not drawn. `forward_edges` and
    `backward_edges`: one entry per `TracedGraph.edges` item, the id of its green/blue or red
    edge (shared by every edge merged into it; None if not drawn).
    """

    nodes: dict[str, str | None]
    forward_edges: list[str | None]
    backward_edges: list[str | None]


def drawn_ids(traced: TracedGraph, options: DrawOptions) -> DrawnIds:
    """The ids that `fill_graph(graph, traced, options)` gives nodes and edges, per record.

    With `options.element_ids`, these are the `id` attributes of the SVG's elements.
    """
    picture = _Picture(traced, options)
    picture.edges()
    return DrawnIds(
        nodes=dict(picture.owner),
        forward_edges=list(picture.forward_edge_ids),
        backward_edges=list(picture.backward_edge_ids),
    )


def _cluster_attrs(path: str) -> dict:
    return {
        "label": path,
        "style": "rounded,dashed",
        "color": "#9a9a9a",
        "fontcolor": "#555555",
        "fontsize": "10",
        "fontname": _FONT,
        "labeljust": "l",
    }


def fill_graph(graph: graphviz.Digraph, traced: TracedGraph, options: DrawOptions) -> None:
    """Write the picture of `traced` into the (empty) `graph`."""
    picture = _Picture(traced, options)
    graph.attr(
        rankdir="LR",
        fontname=_FONT,
        fontsize="10",
        labelloc="b",
        labeljust="r",
        nodesep="0.25",
        ranksep="0.35",
        newrank="true",
        label=_legend(options, bool(picture.modules)),
    )
    graph.attr("node", fontname=_FONT, fontsize="11", margin="0.08,0.04")
    if options.element_ids:
        graph.attr("node", id="\\N")  # Graphviz writes each node's own name there
    graph.attr("edge", arrowsize="0.7", penwidth="1.3")

    # Each drawn node goes into the body of its cluster (None: the top level).
    bodies: dict[str | None, graphviz.Digraph] = {None: graph}
    order: list[str] = []  # cluster paths in order of first use

    def body_for(path: str | None) -> graphviz.Digraph:
        if path is None or not options.clusters:
            return graph
        for prefix in scope_prefixes(path):
            if prefix not in bodies:
                bodies[prefix] = graphviz.Digraph(name=f"cluster_{len(order)}")
                bodies[prefix].attr(**_cluster_attrs(prefix))
                order.append(prefix)
        return bodies[path]

    for record in traced.tensors:
        op = picture.producer.get(record.id)
        if op is not None and picture.owner[op.id] == op.id:
            _draw_op(body_for, picture, op, options)  # just before its output: program order
        if picture.owner.get(record.id) == record.id:
            body_for(picture.scope_of[record.id]).node(
                record.id, label=_tensor_label(record, options), **_tensor_style(record)
            )
    for path, module in picture.modules.items():
        label = [_plain(path), (f"{module['ops']} ops", _SMALL, "#444444")]
        if module["params"]:
            label.append(
                (f"{module['params']} parameters, {module['elements']} values", _SMALL, "#444444")
            )
        body_for(picture.scope_of[module["id"]]).node(
            module["id"],
            label=_lines(label),
            shape="box3d",
            style="filled",
            fillcolor=_FILL["module"],
            tooltip=f"module {path} (collapsed)",
        )

    # Nest the clusters, innermost first, so each is complete when copied into its parent.
    for path in sorted(order, key=lambda p: -p.count(".")):
        parent = path.rpartition(".")[0] or None
        bodies[parent].subgraph(bodies[path])
    for tail, head, attrs in picture.edges():
        graph.edge(tail, head, **attrs)


def _draw_op(body_for, picture: _Picture, op: OpRecord, options: DrawOptions) -> None:
    folded = picture.owner[op.output.id] == op.id
    body_for(picture.scope_of[op.id]).node(
        op.id,
        label=_op_label(op, options, folded),
        shape="ellipse",
        style="filled",
        fillcolor=_FILL["op"],
        color="#666666",
        tooltip=_op_tooltip(op),
    )


def _tensor_style(record: TensorRecord) -> dict:
    tooltip = f"{record.name or record.kind} {_shape_line(record.shape, record.dtype)}"
    if record.kind == "parameter":
        style = {"shape": "box", "style": "filled", "fillcolor": _FILL["parameter"]}
    elif record.kind == "input":
        style = {"shape": "box", "style": "filled", "fillcolor": _FILL["input"]}
    elif record.kind == "constant":
        style = {
            "shape": "box",
            "style": "filled,dashed",
            "fillcolor": _FILL["constant"],
            "height": "0.3",
            "fontsize": "9",
        }
    else:
        style = {"shape": "box", "style": "rounded", "color": "#666666"}
    if record.is_root:
        style["peripheries"] = "2"
    style["tooltip"] = tooltip
    return style
