"""A backward pass replayed step by step in the browser, over the picture of its graph.

`replay_backward(loss, path)` runs `loss.backward_steps()` (the engine's one loop, exactly what
`loss.backward()` runs), records what each step did, and writes ONE self-contained HTML page:
the graph as inline SVG (forward edges green, as in every picture of viz), and a script that
walks through the steps with the Next / Previous buttons or the arrow keys. At step k the red
edges and the op of step k are highlighted, the red edges of the earlier steps stay red, the
later ones are faded; a side panel shows the op, its formula, the gradient that arrived, the
gradient each input received (small arrays as tables, large ones as shape and statistics) and
the `.grad` every parameter has accumulated so far.

The page needs no network (no CDN, no external font or image) and no re-layout while stepping:
Python precomputes, per step, the ids of the SVG elements to highlight (the picture is drawn
with `element_ids=True`, see dot.py's `drawn_ids`), and the script only toggles CSS classes.
`python -m tinygrad_attn replay` writes the page for the reference article's attention head
(`examples.replay_example`).

This module only reads the graph and the steps; it must not change how backward runs (it
consumes the same generator as `backward()`), nor decide what the picture looks like (dot.py).
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .. import format as fmt
from ..debug import formula
from ..engine import BackwardStep
from ..tensor import Tensor
from .axes import AxisLabels
from .dot import drawn_ids, fill_graph
from .formula import backward_source
from .heatmap import makes_attention_weights
from .options import DrawOptions
from .render import GraphPicture, RendererNotFound, find_renderer, run_renderer
from .trace import TracedGraph, trace

# ----------------------------------------------------------------------- arrays as JSON
array_summary = fmt.summary  # what the page shows of an array (see tinygrad_attn.format)


def _coloured(summary: dict | None, attention: bool = False) -> dict | None:
    """A summary with each shown cell's colour, computed here by the functions the graph's
    heat maps use (so a value has one colour in every view): attention weights on the
    absolute 0 -> 1 scale, anything else (values, gradients) on its own symmetric scale."""
    if summary is None or "rows" not in summary:
        return summary
    values = np.array(
        [[v if isinstance(v, float | int) else np.nan for v in row] for row in summary["rows"]],
        dtype=np.float64,
    )
    finite = values[np.isfinite(values)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    if attention:
        colours = [[fmt.weight_colour(v) for v in row] for row in values]
    else:
        colours = [[fmt.value_colour(v, scale) for v in row] for row in values]
    return {**summary, "colours": colours, "attention": attention}


# ----------------------------------------------------------------------- recording the pass


@dataclasses.dataclass
class _Recorded:
    """One BackwardStep, as plain data (its arrays are gone once the step is released).
    `of` says which tensor each array belongs to, so its axes can be labelled once the graph is
    traced: `data` paths -> "output" or an input position."""

    node: Any
    data: dict
    inputs_with_grad: list[int]
    leaf_grads: dict[int, dict]  # id(leaf) -> summary of its .grad after this step
    of: list[tuple[dict, str | int, bool]]  # (summary, "output" or input position, is a value)


def _record_step(step: BackwardStep) -> _Recorded:
    node = step.node
    inputs = []
    with_grad = []
    leaf_grads = {}
    of: list[tuple[dict, str | int, bool]] = []
    for position, (tensor, grad, needs) in enumerate(
        zip(step.inputs, step.grad_inputs, node.needs_input_grad)
    ):
        if grad is not None:
            with_grad.append(position)
        why = None
        if grad is None:
            why = "no gradient: it does not require grad" if not needs else "no gradient"
        entry = {
            "label": fmt.label(tensor),
            "origin": fmt.origin(tensor, needs),
            "grad": array_summary(grad),
            "why": why,
        }
        inputs.append(entry)
        of.append((entry, position, False))
        if isinstance(tensor, Tensor) and tensor.grad_fn is None and tensor._grad is not None:
            leaf_grads[id(tensor)] = array_summary(tensor._grad._data)
    forward = _forward_values(step)
    of += [(entry, entry.pop("of"), True) for entry in forward if entry["of"] is not None]
    for entry in forward:
        entry.pop("of", None)
    data = {
        "index": step.index,
        "op": step.op,
        "in_place": node.inplace,
        "output": fmt.label(step.output),
        "forward": forward,
        "scope": node.scope or None,
        "made_by": backward_source([node]),  # an op an earlier backward made (create_graph)
        "site": node.creation_site,
        "formula": formula(node),
        "grad_output": array_summary(step.grad_output),
        "inputs": inputs,
        "explain": step.explain(),
    }
    of.append((data, "output", False))
    return _Recorded(node, data, with_grad, leaf_grads, of)


def _forward_values(step: BackwardStep) -> list[dict]:
    """The forward arrays this op's backward reads (what forward saved), each named by what it
    is when that is known (the op's output, e.g. softmax's y, or one of its inputs, while the
    program still holds them), else by its shape. `of`: "output", the input's position, or
    None (which tensor it is, for its axis labels)."""
    saved = [a for a in step.node._saved or () if isinstance(a, np.ndarray)]
    named = []
    for array in saved:
        text = f"saved for backward: {fmt.shape_text(array.shape, array.dtype)}"
        of: str | int | None = None
        if _same(array, getattr(step.output, "_data", None)):
            text, of = f"output {fmt.label(step.output)}", "output"
        else:
            for position, tensor in enumerate(step.inputs):
                if _same(array, getattr(tensor, "_data", None)):
                    text, of = f"input {position}: {fmt.label(tensor)}", position
                    break
        named.append({"label": text, "value": array_summary(array), "of": of})
    return named


def _label_arrays(traced: TracedGraph, axes: AxisLabels, recorded: list[_Recorded]) -> None:
    """Give every array of the page the labels of its tensor's axes (`rows`/`cols` of its
    summary) and its colours: attention weights on the absolute scale, the rest on their own
    symmetric one (`_coloured`), as the graph's heat maps."""
    op_of = {op.node: op for op in traced.ops}
    producer = {op.output.id: op.node for op in traced.ops}
    inputs_of: dict[str, dict[int, str]] = {}
    for edge in traced.edges:
        if edge.position is not None:
            inputs_of.setdefault(edge.dst, {})[edge.position] = edge.src
    for item in recorded:
        op = op_of[item.node]
        for holder, which, is_value in item.of:
            record = op.output.id if which == "output" else inputs_of[op.id][which]
            key = "value" if is_value else ("grad_output" if which == "output" else "grad")
            summary = holder.get(key)
            if summary is None:
                continue
            attention = is_value and makes_attention_weights(producer.get(record))
            summary = _coloured(summary, attention)
            rows, cols = _summary_labels(axes, record, summary["shape"])
            if rows is not None:
                summary["row_labels"] = list(rows)
            if cols is not None:
                summary["col_labels"] = list(cols)
            holder[key] = summary


def _summary_labels(axes: AxisLabels, record: str, shape: list[int]) -> tuple:
    """The labels of the rows and columns a summary shows (`format.summary`: the last axis
    across, every other axis folded into the rows)."""
    per_axis = axes.of(record) if tuple(shape) == axes.shapes.get(record) else ()
    if not per_axis:
        return None, None
    cols = per_axis[-1]
    leading = [(labels, n) for labels, n in zip(per_axis[:-1], shape[:-1]) if n != 1]
    rows = leading[0][0] if len(leading) == 1 else None
    return rows, cols


def _same(a: Any, b: Any) -> bool:
    return isinstance(b, np.ndarray) and a.shape == b.shape and np.shares_memory(a, b)


def _element_sets(traced: TracedGraph, options: DrawOptions, recorded: list[_Recorded]) -> dict:
    """Per step, the SVG ids to highlight: `now` (the op's node and its red edges), `flow`
    (the tensors the gradient passed through), and `first` (what this step reaches first)."""
    ids = drawn_ids(traced, options)
    op_of = {op.node: op for op in traced.ops}
    edge_index = {}  # (op id, input position or None for the output edge) -> traced edge index
    for index, edge in enumerate(traced.edges):
        if edge.position is None:
            edge_index[(edge.src, None)] = index
        else:
            edge_index[(edge.dst, edge.position)] = index
    inputs_of = {}  # op id -> record ids of its inputs, by position
    for edge in traced.edges:
        if edge.position is not None:
            inputs_of.setdefault(edge.dst, {})[edge.position] = edge.src

    parameter_nodes = {ids.nodes[r.id] for r in traced.tensors if r.kind == "parameter"}
    reached: set[str] = set()
    steps = []
    for item in recorded:
        op = op_of[item.node]
        node_id = ids.nodes[op.id]
        edges = [ids.backward_edges[edge_index[(op.id, None)]]]
        tensors = [ids.nodes[op.output.id]]
        for position in item.inputs_with_grad:
            edges.append(ids.backward_edges[edge_index[(op.id, position)]])
            tensors.append(ids.nodes[inputs_of[op.id][position]])
        now = _unique([node_id, *edges])
        flow = [t for t in _unique(tensors) if t not in now]
        first = [i for i in now + flow if i not in reached]
        reached.update(first)
        params = [ids.nodes[inputs_of[op.id][p]] for p in item.inputs_with_grad]
        params = [p for p in _unique(params) if p in parameter_nodes]
        steps.append(
            {
                **item.data,
                "node": node_id,
                "now": now,
                "flow": flow,
                "first": first,
                "params": params,
            }
        )
    backward_edges = _unique(ids.backward_edges)
    root = ids.nodes[traced.roots[0].id] if traced.roots else None
    return {"steps": steps, "backward_edges": backward_edges, "root": root}


def _unique(items: list) -> list:
    """Items in order, without None and without repeats."""
    return [item for item in dict.fromkeys(items) if item is not None]


# ----------------------------------------------------------------------- the page


def replay_backward(
    loss: Tensor, path: str | os.PathLike = "backward.html", **graph_options: Any
) -> Path:
    """Run `loss`'s backward pass and write a page that replays it step by step; return the path.

    The page (one HTML file, nothing fetched from the network) shows the graph, forward edges
    green, and walks through the steps `loss.backward_steps()` yielded with Next / Previous
    or the arrow keys (Home / End jump to the ends): the current op and its red edges are
    highlighted, earlier red edges stay red, later ones are faded, and a side panel shows the
    op's formula, the gradients that went in and out, and every parameter's `.grad` so far.

    This RUNS the backward pass: afterwards the parameters hold their gradients and the graph
    is released, exactly as after `loss.backward()`. `graph_options` are those of `draw_graph`
    (`collapse`, `intermediates`, `title`, `show_values`, ...).
    """
    if not isinstance(loss, Tensor):
        raise TypeError(
            f"replay_backward: expected the Tensor to run backward from (e.g. the loss), got "
            f"{type(loss).__name__}"
        )
    options = DrawOptions.from_keywords("replay_backward", **graph_options)
    if options.passes == "forward":
        raise ValueError(
            "replay_backward: passes='forward' draws no red edges, so there is nothing to "
            "replay; use passes='both' (the default) or 'backward'"
        )
    # the pass replayed is drawn as red twins, also over the ops of an earlier backward (a
    # second-order quantity): the default draws them
    passes = options.passes or "both"
    options = dataclasses.replace(options, element_ids=True, passes=passes)
    renderer = find_renderer()  # before backward: a missing renderer must not eat the graph
    if renderer is None:
        raise RendererNotFound(
            "replay_backward: no Graphviz renderer found to draw the graph; install one with "
            "`pip install graphviz-pure` (or Graphviz), then call it again. backward has not run."
        )

    parameters = _parameters(trace(loss))
    before = {id(t): array_summary(t._grad._data) for t in parameters if t._grad is not None}
    recorded = [_record_step(step) for step in loss.backward_steps()]
    _note_final_grads(parameters, recorded)

    # Drawn from the released graph: its structure, names and shapes are all kept, and the
    # values of tensors still referenced are the same as before backward.
    traced = trace(loss)
    axes = AxisLabels(traced, options.axis_labels, "replay_backward")
    _label_arrays(traced, axes, recorded)
    svg, legend = _svg(traced, options, renderer)
    sets = _element_sets(traced, options, recorded)
    leaves = [{"name": t.name or f"parameter {i}"} for i, t in enumerate(parameters)]
    position = {id(t): i for i, t in enumerate(parameters)}
    record_of = {id(r.tensor): r.id for r in traced.tensors if r.kind == "parameter"}

    def leaf_summary(key: int, grad: dict) -> dict:
        grad = _coloured(grad)
        if grad is not None and key in record_of:
            rows, cols = _summary_labels(axes, record_of[key], grad["shape"])
            grad = {**grad, "row_labels": rows and list(rows), "col_labels": cols and list(cols)}
        return grad

    for step, item in zip(sets["steps"], recorded):
        step["leaves"] = {
            str(position[key]): leaf_summary(key, grad)
            for key, grad in item.leaf_grads.items()
            if key in position
        }
    data = {
        "title": options.title or f"backward of {loss.name or 'the output'}",
        "steps": sets["steps"],
        "backward_edges": sets["backward_edges"],
        "root": sets["root"],
        "leaves": leaves,
        "initial": {str(position[key]): leaf_summary(key, grad) for key, grad in before.items()},
        "palette": {"negative": fmt.NEGATIVE, "zero": fmt.ZERO, "positive": fmt.POSITIVE},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(svg, data, legend), encoding="utf-8")
    return ReplayPage(path)


class ReplayPage(type(Path())):  # type: ignore[misc]
    """The path of a written replay page; in Jupyter it shows itself, inline, in an iframe
    (`srcdoc`: the page's CSS and keys stay inside it, the notebook is untouched)."""

    def _repr_html_(self) -> str:
        page_text = html.escape(self.read_text(encoding="utf-8"), quote=True)
        return (
            f'<iframe srcdoc="{page_text}" style="display: block; box-sizing: border-box; '
            'width: 100%; height: 640px; border: 1px solid #ddd;" sandbox="allow-scripts">'
            "</iframe>"
        )


def _svg(traced: TracedGraph, options: DrawOptions, renderer: str) -> tuple[str, str]:
    """The graph without its legend, and the legend by itself (the page shows it outside the
    scrolled graph, where it stays in view)."""
    picture = GraphPicture(name="tinygrad_attn", format="svg")
    options = dataclasses.replace(options, title=None)  # the page's header says it already
    label = fill_graph(picture, traced, options, legend_apart=True).legend
    legend = GraphPicture(name="legend", format="svg")
    if label is not None:
        legend.attr(label=label, labelloc="t", labeljust="l", fontname="Helvetica", fontsize="10")
    graph = run_renderer(picture.source, "svg", renderer).decode("utf-8")
    key = run_renderer(legend.source, "svg", renderer).decode("utf-8") if label else ""

    def inline(svg: str) -> str:
        return svg[svg.index("<svg") :] if svg else ""  # no XML prolog or DOCTYPE inside HTML

    return inline(graph), inline(key)


def _parameters(traced: TracedGraph) -> list[Tensor]:
    """The leaves that require grad, in the picture's order."""
    return [r.tensor for r in traced.tensors if r.kind == "parameter"]


def _note_final_grads(parameters: list[Tensor], recorded: list[_Recorded]) -> None:
    """The engine hands a leaf with hooks its gradient only after the last step: show the
    `.grad` every parameter ends with at the last step, where it differs from what was seen."""
    if not recorded:
        return
    seen: dict[int, dict | None] = {}
    for item in recorded:
        seen.update(item.leaf_grads)
    for tensor in parameters:
        final = array_summary(tensor._grad._data)
        if final is not None and seen.get(id(tensor)) != final:
            recorded[-1].leaf_grads[id(tensor)] = final


def asset(name: str) -> str:
    """One of the page's files (replay.html, replay.css, replay.js), from the package data."""
    return resources.files(__package__).joinpath("assets", name).read_text(encoding="utf-8")


def page(svg: str, data: dict, legend: str = "") -> str:
    """The HTML page: the SVG and its legend, the replay data as JSON, and the CSS and script
    inlined (one file, nothing fetched). The three parts are package data files in
    `viz/assets/`."""
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # a "</script>" inside a string must not end it
    title = html.escape(data["title"])
    return (
        asset("replay.html")
        .replace("__TITLE__", title)
        .replace("__CSS__", asset("replay.css"))
        .replace("__SCRIPT__", asset("replay.js"))
        .replace("__LEGEND__", legend)
        .replace("__SVG__", svg)
        .replace("__DATA__", payload)
    )
