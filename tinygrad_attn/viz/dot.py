"""From a traced graph to a Graphviz picture: colours, node styles, heat maps, legend, clusters.

The picture follows the reference article's diagrams, left to right by default
(`direction="TB"` for top to bottom): X and the parameters first, then each step.

- forward edges are GREEN: the value flows from a tensor into an op, or out of an op;
- backward edges are RED, one twin per differentiable forward edge, with the arrowhead at the
  tensor the gradient flows into (they are written `tensor -> op [dir=back]`, so the layout
  stays left to right while the arrow points from the loss back to the parameters);
- edges carrying data that takes no gradient (the input X, masks, constants) are BLUE and have
  no red twin: a red edge never reaches X.

The graph of a gradient (`backward(create_graph=True)`) holds ops that the backward pass made:
each is drawn red-bordered on a light red fill, with a grey line saying whose backward made it
("from the backward of softmax"), and what flows out of it, a gradient, along a RED edge that
points the way it flows (dashed if red twins are drawn too). The forward values it reads stay
green (so do the values a fused op's backward computes again before differentiating them).

Node shapes: an op is a grey rounded box headed by its formula (`Q Kᵀ / √5`), holding the
tensor it made (name, shape, values); parameters (leaves that require grad) are yellow boxes,
inputs blue boxes, constants (with `all_ops=True`) small dashed boxes; the root (the loss) has a
double border; a collapsed module is one purple 3-D box naming its path, type and contents.
Ops made while a module was being called sit in dashed clusters named by the module path.
Which records become which node (folding, collapsing) is picture.py's business, what the
formulas say formula.py's, the options options.py's; values and gradients are drawn as heat
maps (heatmap.py) in the palette of `tinygrad_attn.format`.

This module must not trace the graph (trace.py does) nor run a renderer (render.py does).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

import graphviz
import numpy as np

from ..format import NEGATIVE, POSITIVE, ZERO, describe, in_place, shape_text
from ..state import get_default_dtype
from .axes import AxisLabels
from .formula import backward_source, phrase, plumbing_count
from .heatmap import FONT, as_grid, heatmap, makes_attention_weights, short_labels, value_range
from .options import DrawOptions
from .picture import Picture, Resolved, resolve_collapse, resolve_passes
from .trace import TensorRecord, TracedGraph, scope_prefixes
from .values import kept_grad, kept_value

# Hex colours, so that the SVG and the PNG (and every renderer) agree.
GREEN = "#2ca02c"  # forward: values
RED = "#d62728"  # backward: gradients
BLUE = "#1f77b4"  # data that takes no gradient
_COLOURS = {"forward": GREEN, "backward": RED, "no_grad": BLUE, "gradient": RED}

_FILL = {
    "op": "#ececec",
    "parameter": "#fff2b3",
    "input": "#d6e6f5",
    "constant": "#f4f4f4",
    "tensor": "#ffffff",
    "module": "#e6dcf5",
    "backward op": "#fdeceb",
}
_FONT = "Helvetica"
_SMALL = FONT  # point size of the shape/dtype and value lines
_GREY = "#444444"
_HEADER = 10  # point size of a node's first line (bold)
_AUTO_TB_COLUMNS = 10  # direction="auto": wider pictures are drawn top to bottom


def _shape(shape: tuple, dtype: Any) -> str:
    """`(6, 5)`, with the dtype only when it is not the default one (`(6, 5) float64`)."""
    if np.dtype(dtype) == np.dtype(get_default_dtype()):
        return str(tuple(shape))
    return shape_text(shape, dtype)


# ----------------------------------------------------------------------------- labels
def _text(value: Any) -> str:
    return html.escape(str(value), quote=True)


def describe_array(array: np.ndarray, max_elements: int) -> str:
    """Small arrays in full (3 significant digits), larger ones as min / mean / max."""
    array = np.asarray(array)
    if array.ndim == 0 or array.size == 1:
        return describe(array.reshape(()))
    if array.size <= max_elements:
        return np.array2string(array, precision=3, separator=", ", max_line_width=48)
    values = array.astype(np.float64)
    return f"min {values.min():.3g}  mean {values.mean():.3g}  max {values.max():.3g}"


def _row(text: str, size: int | None = None, colour: str | None = None, bold=False) -> str:
    """One line of a label table (text escaped here)."""
    body = _text(text)
    if bold:
        body = f"<b>{body}</b>"
    attrs = (f' point-size="{size}"' if size else "") + (f' color="{colour}"' if colour else "")
    if attrs:
        body = f"<font{attrs}>{body}</font>"
    return f"<tr><td>{body}</td></tr>"


def _table(rows: list[str]) -> str:
    return (
        '<<table border="0" cellborder="0" cellspacing="1" cellpadding="0">'
        + "".join(rows)
        + "</table>>"
    )


class _Drawer:
    """Labels and styles of one picture (what is drawn comes from `Picture`)."""

    def __init__(self, picture: Picture, options: DrawOptions, axes: AxisLabels) -> None:
        self.picture = picture
        self.options = options
        self.axes = axes
        self.drawn: set[str] = set()  # legend entries: what the picture contains
        self.shortened: dict[tuple, tuple] = {}  # column labels written short -> whole
        # A module's type: from the scope a node was made in (nn's ModulePath, a str carrying
        # `module_type`), or from the `model` option, which also names modules that made no node.
        self.module_types: dict[str, str] = {}
        for op in picture.traced.ops:
            scope = op.node.scope
            while getattr(scope, "module_type", None) and scope not in self.module_types:
                self.module_types[str(scope)] = str(scope.module_type)
                scope = getattr(scope, "parent", None)  # the module that holds it
        if options.model is not None and hasattr(options.model, "named_modules"):
            for path, module in options.model.named_modules():
                self.module_types[path] = type(module).__name__

    # --------------------------------------------------------------- arrays
    def _array_rows(self, record: TensorRecord, value, grad, attention: bool) -> list[str]:
        options = self.options
        rows: list[str] = []
        if options.show_values:
            missing = "value not kept (tensor is gone)"
            rows += self._one_array(record, value, attention, None, missing)
        if options.show_grads and record.requires_grad:
            rows += self._one_array(record, grad, False, RED, "grad: none yet")
        return rows

    def _one_array(
        self, record: TensorRecord, array, attention: bool, colour: str | None, missing: str
    ) -> list[str]:
        tag = "grad " if colour else ""
        if array is None:
            return [_row(missing, _SMALL, colour or "#777777")]
        grid = as_grid(array)
        if grid is None:
            text = describe_array(array, self.options.max_elements)
            equals = "" if text.startswith("min ") else "= "
            return [_row(tag + equals + text, _SMALL, colour)]
        self.drawn.add("weights" if attention else "values")
        numbers = attention and 1 < grid.shape[1] <= 8  # every weight printed, if it fits
        row_labels, col_labels = self.axes.grid(record.id, np.shape(array))
        if col_labels is not None and not numbers:
            short = short_labels(col_labels)
            if short != tuple(col_labels):
                self.shortened[short] = tuple(col_labels)
        rows = []
        if colour:
            rows.append(_row("grad", _SMALL, colour))
        table = heatmap(grid, row_labels, col_labels, attention=attention, numbers=numbers)
        rows.append(f"<tr><td>{table}</td></tr>")
        rows.append(_row(value_range(grid), _SMALL, colour or _GREY))
        return rows

    # --------------------------------------------------------------- nodes
    def op_label(self, node: str) -> str:
        picture, options = self.picture, self.options
        ops = picture.groups[node]
        out = picture.output_of(node)
        inside = picture.owner.get(out.id) == node  # the result is drawn in this node
        header = ops[-1].node.name if options.all_ops else phrase(picture, node)
        method = in_place(ops[-1].node)
        if method:  # the tensor was changed in place: say so first, then the formula
            formula = header
            header = f"{method} (in place)"
        rows = [_row(header, None if not inside else _HEADER, None, bold=inside)]
        if method:
            rows.append(_row(formula, _SMALL, _GREY))
        made_by = backward_source([op.node for op in ops])
        if made_by:  # an op of a gradient's graph: whose backward it is
            rows.append(_row(made_by, _SMALL, _GREY))
        rearranged = 0 if options.all_ops else plumbing_count(picture, node)
        if rearranged:  # e.g. the heads split before the fused attention and merged after it
            moved = "reshapes and transposes" if rearranged > 1 else "reshape or transpose"
            rows.append(_row(f"+ {rearranged} {moved}", _SMALL, _GREY))
        if options.show_params:
            params = " ".join(p for p in (_op_params(op) for op in ops) if p)
            if params:
                rows.append(_row(params, _SMALL, _GREY))
        if inside:
            shown = picture.names.get(out.id, out.name)
            name = f"→ {shown} " if shown else "→ "
            rows.append(_row(name + _shape(out.shape, out.dtype), _SMALL, _GREY))
            value, grad = _values_of(out)
            rows += self._array_rows(out, value, grad, makes_attention_weights(ops[-1].node))
            if out.is_root:
                self.drawn.add("root")
        if options.show_saved:
            rows.append(_row(_saved_line(ops), _SMALL, "#6a3d9a"))
        return _table(rows)

    def op_style(self, node: str) -> dict:
        ops = self.picture.groups[node]
        inside = self.picture.owner.get(self.picture.output_of(node).id) == node
        self.drawn.add("op" if inside else "op alone")
        style = {
            "shape": "box" if inside else "ellipse",
            "style": "rounded,filled" if inside else "filled",
            "fillcolor": _FILL["op"],
            "color": "#666666",
            "tooltip": _op_tooltip(ops),
        }
        if backward_source([op.node for op in ops]):  # a backward's op: the article's red arrows
            self.drawn.add("backward op")
            style.update(fillcolor=_FILL["backward op"], color=RED, penwidth="2")
        out = self.picture.output_of(node)
        if out.is_root and self.picture.owner.get(out.id) == node:
            style["peripheries"] = "2"
        return style

    def tensor_label(self, record: TensorRecord) -> str:
        if record.kind == "constant":
            value = describe_array(record.tensor._data, self.options.max_elements)
            return _table([_row(value, _SMALL)])
        rows = []
        name = self.picture.names.get(record.id, record.name)
        if name:
            rows.append(_row(name, _HEADER, None, bold=record.kind != "tensor"))
        rows.append(_row(_shape(record.shape, record.dtype), _SMALL, _GREY))
        value, grad = _values_of(record)
        rows += self._array_rows(record, value, grad, False)
        small = value is not None and np.size(value) <= self.options.max_elements
        if record.id in self.picture.computed and small and not self.options.show_values:
            rows.append(_row("= " + describe_array(value, self.options.max_elements), _SMALL))
        return _table(rows)

    def tensor_style(self, record: TensorRecord) -> dict:
        name = self.picture.names.get(record.id, record.name)
        tooltip = f"{name or record.kind} {shape_text(record.shape, record.dtype)}"
        self.drawn.add(record.kind)
        if record.kind == "parameter":
            style = {"shape": "box", "style": "filled", "fillcolor": _FILL["parameter"]}
        elif record.kind == "input":
            # the ops an input feeds, in program order (X -> query, key, value, from the top)
            style = {"shape": "box", "style": "filled", "fillcolor": _FILL["input"]}
            style["ordering"] = "out"
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
            self.drawn.add("root")
        style["tooltip"] = tooltip
        return style

    def module_label(self, box) -> str:
        kind = self.module_types.get(box.path)
        rows = [_row(f"{box.path} · {kind}" if kind else box.path, _HEADER, None, bold=True)]
        if box.backward:  # the ops its backward pass made (a gradient's graph)
            rows.append(_row(f"its backward: {_count(box.ops, 'op')}", _SMALL, _GREY))
        else:
            rows.append(_row(_count(box.ops, "op"), _SMALL, _GREY))
        if box.params:
            held = f"{_count(box.params, 'parameter')}, {box.elements:,} values"
            rows.append(_row(held, _SMALL, _GREY))
        self.drawn.add("module")
        return _table(rows)

    def cluster_attrs(self, path: str) -> dict:
        self.drawn.add("cluster")
        kind = self.module_types.get(path)
        return {
            "label": f"{path} · {kind}" if kind else path,
            "style": "rounded,dashed",
            "color": "#9a9a9a",
            "fontcolor": "#555555",
            "fontsize": "10",
            "fontname": _FONT,
            "labeljust": "l",
        }

    # --------------------------------------------------------------- legend
    def legend(self, edges: list, per_row: int = 2) -> str:
        """A small table of what the colours and shapes mean, listing only what is drawn
        (`per_row` entries a row: two beside a picture, more in a page's wide strip)."""
        colours = {attrs["color"] for _, _, attrs in edges if attrs["color"] != RED}
        for _, _, attrs in edges:  # red: a backward's twins (pointing back), or its ops' edges
            if attrs["color"] == RED:
                colours.add("back" if attrs.get("dir") == "back" else attrs.get("style", "flow"))

        def swatch(colour: str, text: str, arrow: str = "&#8594;") -> str:
            return (
                f'<td><font color="{colour}" point-size="11"><b>{arrow}</b></font></td>'
                f'<td align="left"><font color="{colour}">{text}</font></td>'
            )

        def box(text: str, fill: str, style: str = "", border: int = 1) -> str:
            styled = f' style="{style}"' if style else ""
            return (
                f'<td border="{border}" bgcolor="{fill}"{styled} width="16" height="10" '
                f'fixedsize="true"></td><td align="left">{text}</td>'
            )

        items = []
        if GREEN in colours:
            items.append(swatch(GREEN, "forward: values"))
        if "flow" in colours:  # (only the gradient's graph is drawn: its edges point onwards)
            items.append(swatch(RED, "backward: gradients"))
        if "back" in colours:
            items.append(swatch(RED, "backward: gradients", "&#8592;"))
        if "dashed" in colours:  # (beside the twins: a gradient, as a value of this graph)
            items.append(
                f'<td border="1" sides="b" style="dashed" color="{RED}" width="16" height="6" '
                f'fixedsize="true"></td><td align="left"><font color="{RED}">a gradient made '
                "by a backward, as a value</font></td>"
            )
        if BLUE in colours:
            items.append(swatch(BLUE, "data that takes no gradient"))
        drawn = self.drawn
        if "op" in drawn:
            items.append(box("op: its formula and result", _FILL["op"], "rounded"))
        if "op alone" in drawn:
            items.append(box("op (an ellipse)", _FILL["op"], "rounded"))
        if "backward op" in drawn:
            items.append(
                f'<td border="2" color="{RED}" bgcolor="{_FILL["backward op"]}" width="16" '
                'height="10" fixedsize="true"></td><td align="left">op of the backward pass '
                "(create_graph=True)</td>"
            )
        if "tensor" in drawn:
            items.append(box("intermediate tensor", _FILL["tensor"], "rounded"))
        if "parameter" in drawn:
            items.append(box("parameter (requires grad)", _FILL["parameter"]))
        if "input" in drawn:
            items.append(box("input (no grad)", _FILL["input"]))
        if "constant" in drawn:
            items.append(box("constant", _FILL["constant"], "dashed"))
        if "root" in drawn:
            # (a gradient drawn: its root is where the gradient ends, not where a pass starts)
            gradient = any(root.id in self.picture.gradients for root in self.picture.traced.roots)
            root = "here, the gradient" if gradient else "backward starts here"
            items.append(
                '<td><table border="1" cellborder="0" cellspacing="1" cellpadding="0"><tr>'
                '<td border="1" width="12" height="6" fixedsize="true"></td></tr></table></td>'
                f'<td align="left">double border: the root ({root})</td>'
            )
        if "cluster" in drawn:
            items.append(box("module (dashed box)", "#ffffff", "dashed"))
        if "module" in drawn:
            items.append(box("collapsed module", _FILL["module"]))
        if "values" in drawn:
            items.append(_palette_swatch())
        if "weights" in drawn:
            items.append(
                f'<td border="1" bgcolor="{ZERO}:{POSITIVE}" width="16" height="10" '
                'fixedsize="true"></td><td align="left">attention weight 0 → 1</td>'
            )

        title = self.options.title
        rows = []
        span = 2 * per_row
        if title:
            rows.append(f'<tr><td colspan="{span}" align="left"><b>{_text(title)}</b></td></tr>')
        for i in range(0, len(items), per_row):
            rows.append("<tr>" + "".join(items[i : i + per_row]) + "</tr>")
        for short, whole in self.shortened.items():  # columns labelled by their first letters
            rows.append(
                f'<tr><td align="left">{_text(" ".join(short))}</td><td colspan="{span - 1}" '
                f'align="left">columns: {_text(", ".join(whole))}</td></tr>'
            )
        return (
            '<<table border="0" cellborder="0" cellspacing="2" cellpadding="1">'
            + "".join(rows)
            + "</table>>"
        )


def _palette_swatch() -> str:
    cells = "".join(
        f'<td bgcolor="{c}" width="6" height="10" fixedsize="true"></td>'
        for c in (NEGATIVE, "#b2abd2", ZERO, "#fdb863", POSITIVE)
    )
    return (
        '<td><table border="0" cellborder="0" cellspacing="0" cellpadding="0"><tr>'
        f'{cells}</tr></table></td><td align="left">value &lt; 0 · 0 · &gt; 0 (each map: its '
        "largest |value| is full colour)</td>"
    )


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _values_of(record: TensorRecord) -> tuple:
    """The value and gradient of a tensor: from the live tensor, else what
    `viz.keep_values()` recorded for the op that made it."""
    tensor = record.tensor
    value = tensor._data if tensor is not None else None
    grad = getattr(getattr(tensor, "_grad", None), "_data", None)  # (._grad: .grad warns)
    if record.op is not None:
        value = value if value is not None else kept_value(record.op)
        grad = grad if grad is not None else kept_grad(record.op)
    return value, grad


def _op_params(op) -> str:
    """The simple attributes forward set on the ctx (axis=-1, scale=0.5), in a stable order."""
    shown = []
    params = op.node.params()  # the node's own attributes, not the framework's (function.py)
    for key in sorted(params):
        value = params[key]
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


def _saved_line(ops: list) -> str:
    if any(op.node.released for op in ops):
        return "saved: freed by backward"
    arrays = [a for op in ops for a in op.node._saved or () if isinstance(a, np.ndarray)]
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


def _op_tooltip(ops: list) -> str:
    """Each op, where it was made (when recorded) and its formula, shown on hover in an SVG."""
    parts = []
    for op in ops:
        doc = " ".join((type(op.node).__doc__ or "").split())
        site = op.node.creation_site
        parts.append(f"{op.node.name}: {doc}" + (f" (created at {site})" if site else ""))
    text = "\\n".join(part.replace("\\", "\\\\") for part in parts if part)  # DOT escapes
    return text or ops[-1].node.name


# ----------------------------------------------------------------------------- drawing
@dataclass(frozen=True)
class DrawnIds:
    """Where each traced record ended up in the picture (see `drawn_ids`).

    `nodes`: record id (`t3`, `op5`) -> id of the node drawn for it (itself, the op node it is
    drawn in, or a collapsed module box `m0`), None if not drawn. `forward_edges` and
    `backward_edges`: one entry per `TracedGraph.edges` item, the id of its green/blue or red
    edge (shared by every edge merged into it; None if not drawn).
    """

    nodes: dict[str, str | None]
    forward_edges: list[str | None]
    backward_edges: list[str | None]


def _picture(traced: TracedGraph, options: DrawOptions, caller: str) -> Picture:
    options = resolve_passes(traced, options)
    rule: Resolved = resolve_collapse(traced, options, caller)
    return Picture(traced, options, rule)


def drawn_ids(traced: TracedGraph, options: DrawOptions) -> DrawnIds:
    """The ids that `fill_graph(graph, traced, options)` gives nodes and edges, per record.

    With `options.element_ids`, these are the `id` attributes of the SVG's elements.
    """
    picture = _picture(traced, options, "drawn_ids")
    picture.edges(_COLOURS)
    return DrawnIds(
        nodes=dict(picture.owner),
        forward_edges=list(picture.forward_edge_ids),
        backward_edges=list(picture.backward_edge_ids),
    )


def fill_graph(
    graph: graphviz.Digraph,
    traced: TracedGraph,
    options: DrawOptions,
    caller: str = "draw_graph",
    legend_apart: bool = False,
) -> Picture:
    """Write the picture of `traced` into the (empty) `graph`; return what was drawn. With
    `legend_apart`, the legend (the graph's label) is not written into `graph` but left in the
    returned picture's `legend`, for a page that shows it elsewhere."""
    picture = _picture(traced, options, caller)
    options = picture.options  # (with `passes` decided)
    drawer = _Drawer(picture, options, AxisLabels(traced, options.axis_labels, caller))
    direction = options.direction
    if direction == "auto":
        wide = not options.all_ops and picture.columns() > _AUTO_TB_COLUMNS
        direction = "TB" if wide else "LR"
    graph.attr(rankdir=direction, fontname=_FONT, fontsize="10", nodesep="0.18", ranksep="0.2")
    graph.attr("node", fontname=_FONT, fontsize="11", margin="0.06,0.03")
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
                bodies[prefix].attr(**drawer.cluster_attrs(prefix))
                order.append(prefix)
        return bodies[path]

    for record in traced.tensors:
        op = picture.producer.get(record.id)
        if op is not None and op.id in picture.groups:  # just before its output: program order
            node = op.id
            body_for(picture.scope_of[node]).node(
                node, label=drawer.op_label(node), **drawer.op_style(node)
            )
        if picture.owner.get(record.id) == record.id:
            body_for(picture.scope_of[record.id]).node(
                record.id, label=drawer.tensor_label(record), **drawer.tensor_style(record)
            )
    for box in picture.modules.values():
        style = dict(shape="box3d", style="filled", fillcolor=_FILL["module"])
        if box.backward:  # red-bordered, as each op of a backward pass is
            style.update(fillcolor=_FILL["backward op"], color=RED, penwidth="2")
            drawer.drawn.add("backward op")
        body_for(picture.scope_of[box.id]).node(
            box.id,
            label=drawer.module_label(box),
            tooltip=f"module {box.path}{' backward' if box.backward else ''} (collapsed)",
            **style,
        )

    # Nest the clusters, innermost first, so each is complete when copied into its parent.
    # Left to right, dot stacks the sibling clusters of a column last-given first: give them in
    # reverse, so they read in program order from the top (query, key, value).
    last_first = -1 if direction == "LR" else 1
    ranked = sorted(enumerate(order), key=lambda item: (-item[1].count("."), last_first * item[0]))
    for _, path in ranked:
        parent = path.rpartition(".")[0] or None
        bodies[parent].subgraph(bodies[path])
    edges = picture.edges(_COLOURS)
    for tail, head, attrs in edges:
        graph.edge(tail, head, **attrs)
    if options.legend or options.title:
        legend = drawer.legend(edges, 4 if legend_apart else 2) if options.legend else None
        picture.legend = legend or f"<<b>{_text(options.title)}</b>>"
        if not legend_apart:
            graph.attr(labelloc="t", labeljust="l", label=picture.legend)
    return picture
