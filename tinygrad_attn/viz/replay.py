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
`python -m tinygrad_attn replay` writes the page for the reference article's attention head.

This module only reads the graph and the steps; it must not change how backward runs (it
consumes the same generator as `backward()`), nor decide what the picture looks like (dot.py).
"""

from __future__ import annotations

import dataclasses
import html
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..debug import SMALL, formula
from ..engine import BackwardStep
from ..tensor import Tensor
from .dot import DrawOptions, drawn_ids, fill_graph
from .render import GraphPicture, RendererNotFound, find_renderer, run_renderer
from .trace import TracedGraph, trace

# ----------------------------------------------------------------------- arrays as JSON


def _number(value: float) -> float | str:
    """A float rounded to 4 significant digits; NaN and Inf as text (JSON has neither)."""
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return float(f"{value:.4g}")


def array_summary(array: np.ndarray | None) -> dict | None:
    """What the page shows of an array: shape, dtype, statistics over the finite values, and,
    for at most `debug.SMALL` elements, every value as rows (the last axis across)."""
    if array is None:
        return None
    a = np.asarray(array)
    values = a.astype(np.float64)
    finite = values[np.isfinite(values)]
    summary: dict[str, Any] = {
        "shape": list(a.shape),
        "dtype": a.dtype.name,
        "nan": int(np.isnan(values).sum()),
        "inf": int(np.isinf(values).sum()),
    }
    if finite.size:
        summary["stats"] = {
            "min": _number(finite.min()),
            "mean": _number(finite.mean()),
            "max": _number(finite.max()),
            "norm": _number(np.linalg.norm(finite)),
        }
    if a.size <= SMALL:
        rows = values.reshape(1, -1) if a.ndim < 2 else values.reshape(-1, a.shape[-1])  # (R, C)
        summary["rows"] = [[_number(v) for v in row] for row in rows]
    return summary


def _label(tensor: Any) -> str:
    """`weights (6, 6) float32`, or `(6, 6) float32` for an unnamed tensor."""
    name = getattr(tensor, "name", None)
    text = f"{tuple(tensor.shape)} {np.dtype(tensor.dtype).name}"
    return f"{name} {text}" if name else text


def _origin(tensor: Any, needs: bool) -> str:
    if tensor.grad_fn is not None:
        return f"made by {tensor.grad_fn.name}"
    return "parameter: a leaf that requires grad" if needs else "input or constant: no grad"


# ----------------------------------------------------------------------- recording the pass


@dataclasses.dataclass
class _Recorded:
    """One BackwardStep, as plain data (its arrays are gone once the step is released)."""

    node: Any
    data: dict
    inputs_with_grad: list[int]
    leaf_grads: dict[int, dict]  # id(leaf) -> summary of its .grad after this step


def _record_step(step: BackwardStep) -> _Recorded:
    node = step.node
    inputs = []
    with_grad = []
    leaf_grads = {}
    for position, (tensor, grad, needs) in enumerate(
        zip(step.inputs, step.grad_inputs, node.needs_input_grad)
    ):
        if grad is not None:
            with_grad.append(position)
        why = None
        if grad is None:
            why = "no gradient: it does not require grad" if not needs else "no gradient"
        inputs.append(
            {
                "label": _label(tensor),
                "origin": _origin(tensor, needs),
                "grad": array_summary(grad),
                "why": why,
            }
        )
        if isinstance(tensor, Tensor) and tensor.grad_fn is None and tensor._grad is not None:
            leaf_grads[id(tensor)] = array_summary(tensor._grad)
    data = {
        "index": step.index,
        "op": step.op,
        "output": _label(step.output),
        "scope": node.scope or None,
        "site": node.creation_site,
        "formula": formula(node),
        "grad_output": array_summary(step.grad_output),
        "inputs": inputs,
        "explain": step.explain(),
    }
    return _Recorded(node, data, with_grad, leaf_grads)


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
        steps.append({**item.data, "node": node_id, "now": now, "flow": flow, "first": first})
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
    # One node per op by default: the page steps through every primitive op's backward.
    graph_options.setdefault("all_ops", True)
    graph_options.setdefault("max_nodes", 80)
    options = DrawOptions.from_keywords("replay_backward", **graph_options)
    if options.passes == "forward":
        raise ValueError(
            "replay_backward: passes='forward' draws no red edges, so there is nothing to "
            "replay; use passes='both' (the default) or 'backward'"
        )
    options = dataclasses.replace(options, element_ids=True)
    renderer = find_renderer()  # before backward: a missing renderer must not eat the graph
    if renderer is None:
        raise RendererNotFound(
            "replay_backward: no Graphviz renderer found to draw the graph; install one with "
            "`pip install graphviz-pure` (or Graphviz), then call it again. backward has not run."
        )

    parameters = _parameters(trace(loss))
    before = {id(t): array_summary(t._grad) for t in parameters if t._grad is not None}
    recorded = [_record_step(step) for step in loss.backward_steps()]
    _note_final_grads(parameters, recorded)

    # Drawn from the released graph: its structure, names and shapes are all kept, and the
    # values of tensors still referenced are the same as before backward.
    traced = trace(loss)
    svg = _svg(traced, options, renderer)
    sets = _element_sets(traced, options, recorded)
    leaves = [{"name": t.name or f"parameter {i}"} for i, t in enumerate(parameters)]
    position = {id(t): i for i, t in enumerate(parameters)}
    for step, item in zip(sets["steps"], recorded):
        step["leaves"] = {
            str(position[key]): grad for key, grad in item.leaf_grads.items() if key in position
        }
    data = {
        "title": options.title or f"backward of {loss.name or 'the output'}",
        "steps": sets["steps"],
        "backward_edges": sets["backward_edges"],
        "root": sets["root"],
        "leaves": leaves,
        "initial": {str(position[key]): grad for key, grad in before.items()},
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(svg, data), encoding="utf-8")
    return path


def _svg(traced: TracedGraph, options: DrawOptions, renderer: str) -> str:
    picture = GraphPicture(name="tinygrad_attn", format="svg")
    fill_graph(picture, traced, options)
    svg = run_renderer(picture.source, "svg", renderer).decode("utf-8")
    return svg[svg.index("<svg") :]  # the XML prolog and DOCTYPE have no place inside HTML


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
        final = array_summary(tensor._grad)
        if final is not None and seen.get(id(tensor)) != final:
            recorded[-1].leaf_grads[id(tensor)] = final


def page(svg: str, data: dict) -> str:
    """The HTML page: the SVG, the replay data as JSON, and the inline CSS and script."""
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False)
    payload = payload.replace("</", "<\\/")  # a "</script>" inside a string must not end it
    title = html.escape(data["title"])
    return (
        _TEMPLATE.replace("__TITLE__", title)
        .replace("__CSS__", _CSS)
        .replace("__SCRIPT__", _SCRIPT)
        .replace("__SVG__", svg)
        .replace("__DATA__", payload)
    )


def main(out_dir: str) -> int:
    """`python -m tinygrad_attn replay`: the article's attention head ("The earth is like an
    orange", the loss pulling "orange" towards the fruit sense), its backward pass written to
    `out_dir/backward.html`."""
    from .. import nn
    from ..examples import FEATURES, SENTENCES, sense_loss
    from ..tensor import manual_seed

    manual_seed(0)
    head = nn.SelfAttention(len(FEATURES))
    loss = sense_loss(head, SENTENCES[0])
    path = replay_backward(
        loss,
        Path(out_dir) / "backward.html",
        title=f'one backward pass of a self-attention head: "{SENTENCES[0]}"',
    )
    print(f"wrote {path}  (open it in a browser; -> / <- walk through the backward steps)")
    return 0


# ----------------------------------------------------------------------- HTML, CSS, script

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
__CSS__
</style>
</head>
<body>
<header id="rp-bar">
  <strong id="rp-title">__TITLE__</strong>
  <button id="rp-prev" type="button" title="previous step (left arrow)">&larr; Previous</button>
  <span id="rp-counter" aria-live="polite"></span>
  <button id="rp-next" type="button" title="next step (right arrow)">Next &rarr;</button>
  <span class="rp-zoom">
    <button id="rp-zoom-out" type="button" title="zoom out">&minus;</button>
    <button id="rp-zoom-fit" type="button" title="fit the whole graph">fit</button>
    <button id="rp-zoom-in" type="button" title="zoom in">+</button>
  </span>
  <span class="rp-hint">&larr; &rarr; step &middot; Home / End: first / last</span>
</header>
<main>
<div id="rp-graph">
__SVG__
</div>
<aside id="rp-panel"></aside>
</main>
<script type="application/json" id="rp-data">__DATA__</script>
<script>
__SCRIPT__
</script>
</body>
</html>
"""

_CSS = """
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; }
body { display: flex; flex-direction: column; font: 14px/1.4 system-ui, -apple-system,
  "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: #222; background: #fafafa; }
#rp-bar { display: flex; align-items: center; gap: 10px; padding: 8px 12px; flex-wrap: wrap;
  background: #fff; border-bottom: 1px solid #ddd; }
#rp-title { margin-right: auto; }
#rp-bar button { font: inherit; padding: 3px 10px; border: 1px solid #bbb; border-radius: 4px;
  background: #f4f4f4; cursor: pointer; }
#rp-bar button:disabled { opacity: 0.4; cursor: default; }
#rp-counter { font-variant-numeric: tabular-nums; min-width: 8em; text-align: center;
  font-weight: 600; }
.rp-hint { color: #777; font-size: 12px; }
main { flex: 1; display: flex; min-height: 0; }
/* containment: a new side panel must not make the browser lay out the whole SVG again */
#rp-graph { flex: 1; overflow: auto; background: #fff; min-width: 0; contain: strict;
  display: flex; }
#rp-graph svg { flex: none; margin: auto; }  /* centred while smaller than the view */
#rp-panel { width: 440px; flex: none; overflow: auto; padding: 10px 14px; border-left: 1px solid
  #ddd; background: #fcfcfc; contain: strict; }
#rp-panel h2 { font-size: 16px; margin: 4px 0; }
#rp-panel h3 { font-size: 13px; margin: 12px 0 4px; color: #444; text-transform: uppercase;
  letter-spacing: 0.04em; }
#rp-panel .rp-meta { color: #666; font-size: 12px; }
#rp-panel pre { white-space: pre-wrap; margin: 4px 0; font-size: 12px; background: #f2f2f2;
  padding: 6px; border-radius: 4px; }
.rp-arr { margin: 2px 0 8px; overflow-x: auto; }
.rp-arr .rp-shape { color: #555; font-size: 12px; }
.rp-arr table { border-collapse: collapse; margin-top: 2px; font: 11px/1.2 ui-monospace,
  Menlo, Consolas, monospace; }
.rp-arr td { border: 1px solid #e2e2e2; padding: 1px 4px; text-align: right;
  min-width: 3.5em; white-space: nowrap; }
.rp-in { border-left: 3px solid #d62728; padding-left: 8px; margin: 6px 0; }
.rp-in.rp-none { border-left-color: #1f77b4; }
.rp-leaf { border-bottom: 1px solid #eee; padding: 3px 4px; font-size: 12px; }
.rp-leaf.rp-fresh { background: #fde3e1; }
.rp-leaf .rp-nograd { color: #999; margin-left: 1em; }
details summary { cursor: pointer; color: #555; margin-top: 10px; }

/* the replay: red edges not yet reached are faded, the current step is thick */
#rp-graph .rp-bwd:not(.rp-reached) { opacity: 0.12; }
#rp-graph .rp-bwd.rp-now path { stroke-width: 4px; }
#rp-graph .rp-bwd.rp-now polygon { stroke-width: 3px; }
#rp-graph g.node.rp-now ellipse, #rp-graph g.node.rp-now polygon,
#rp-graph g.node.rp-now path { stroke: #d62728; stroke-width: 4px; fill: #fcd4d0; }
#rp-graph g.node.rp-flow ellipse, #rp-graph g.node.rp-flow polygon,
#rp-graph g.node.rp-flow path { stroke: #d62728; stroke-width: 2.5px; }
#rp-graph g.node.rp-reached:not(.rp-now) ellipse { stroke: #d62728; }
"""

_SCRIPT = r"""
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("rp-data").textContent);
  const steps = data.steps;
  const total = steps.length;
  const graph = document.getElementById("rp-graph");
  const svg = graph.querySelector("svg");
  const panel = document.getElementById("rp-panel");
  const counter = document.getElementById("rp-counter");
  const prev = document.getElementById("rp-prev");
  const next = document.getElementById("rp-next");
  const elements = new Map();
  function el(id) {
    if (!elements.has(id)) elements.set(id, document.getElementById(id));
    return elements.get(id);
  }
  function mark(ids, cls, on) {
    for (const id of ids) {
      const e = el(id);
      if (e) e.classList.toggle(cls, on);
    }
  }
  mark(data.backward_edges, "rp-bwd", true);

  // ------------------------------------------------------------------ zoom (not per step)
  const box = svg.viewBox.baseVal;
  const natural = { w: box.width * 4 / 3, h: box.height * 4 / 3 };  // pt -> px
  let zoom = 1;
  function setZoom(z) {
    zoom = Math.max(0.1, Math.min(3, z));
    svg.style.width = natural.w * zoom + "px";
    svg.style.height = natural.h * zoom + "px";
  }
  function fitZoom() {
    return Math.min(graph.clientWidth / natural.w, graph.clientHeight / natural.h);
  }
  setZoom(Math.min(1, Math.max(graph.clientHeight / natural.h, fitZoom())));
  document.getElementById("rp-zoom-in").onclick = () => setZoom(zoom * 1.25);
  document.getElementById("rp-zoom-out").onclick = () => setZoom(zoom / 1.25);
  document.getElementById("rp-zoom-fit").onclick = () => setZoom(fitZoom());

  // ------------------------------------------------------------------ the side panel
  function h(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  function num(v) {
    return typeof v === "number" ? String(v) : v;
  }
  function cell(v) {
    // three significant digits, so that a row of a table fits the panel
    if (typeof v !== "number") return v;
    const size = Math.abs(v);
    if (v === 0) return "0";
    return size < 1e-3 || size >= 1e4 ? v.toExponential(2) : String(Number(v.toPrecision(3)));
  }
  function shapeText(a) {
    return "(" + a.shape.join(", ") + (a.shape.length === 1 ? "," : "") + ") " + a.dtype;
  }
  function statsText(a) {
    const s = a.stats;
    let text = s ? `min ${num(s.min)}  mean ${num(s.mean)}  max ${num(s.max)}  ` +
      `norm ${num(s.norm)}` : "no finite value";
    if (a.nan || a.inf) text += `  NaN ${a.nan}  Inf ${a.inf}`;
    return text;
  }
  const views = new WeakMap();  // a summary's view is built once, then moved between panels
  function arrayView(a) {
    if (!views.has(a)) views.set(a, buildArrayView(a));
    return views.get(a);
  }
  function buildArrayView(a) {
    const wrap = h("div", { class: "rp-arr" });
    wrap.append(h("div", { class: "rp-shape" }, shapeText(a) + "   " + statsText(a)));
    if (a.rows) {
      let biggest = 0;
      for (const row of a.rows) for (const v of row) {
        if (typeof v === "number") biggest = Math.max(biggest, Math.abs(v));
      }
      const table = h("table");
      for (const row of a.rows) {
        const tr = h("tr");
        for (const v of row) {
          const td = h("td", { title: num(v) }, cell(v));
          if (typeof v === "number" && biggest > 0) {
            const alpha = (0.55 * Math.abs(v) / biggest).toFixed(3);
            td.style.background = v >= 0 ? `rgba(214,39,40,${alpha})` : `rgba(31,119,180,${alpha})`;
          }
          tr.append(td);
        }
        table.append(tr);
      }
      wrap.append(table);
    }
    return wrap;
  }
  function leafGrads(k) {
    // what each parameter's .grad holds after the first k steps, and which changed at step k
    const grads = Object.assign({}, data.initial);
    let fresh = {};
    for (let i = 0; i < k; i++) {
      Object.assign(grads, steps[i].leaves);
      if (i === k - 1) fresh = steps[i].leaves;
    }
    return { grads, fresh };
  }
  function leavesView(k) {
    const { grads, fresh } = leafGrads(k);
    const list = h("div", { id: "rp-leaves" }, h("h3", {}, "parameters' .grad so far"));
    data.leaves.forEach((leaf, i) => {
      const grad = grads[String(i)];
      const row = h("div", { "data-leaf": leaf.name, class: "rp-leaf" }, h("b", {}, leaf.name));
      if (grad) row.classList.add("rp-has-grad");
      if (String(i) in fresh) row.classList.add("rp-fresh");
      row.append(grad ? arrayView(grad) : h("span", { class: "rp-nograd" }, ".grad: none yet"));
      list.append(row);
    });
    return list;
  }
  function render(k) {
    panel.replaceChildren();
    if (k === 0) {
      panel.append(
        h("h2", { id: "rp-op" }, "before backward"),
        h("p", {}, `The forward pass is done (green edges). ${total} backward steps follow, ` +
          "one per op, from the loss back to the parameters: press \u2192 to run the first."),
      );
    } else {
      const s = steps[k - 1];
      panel.append(h("h2", { id: "rp-op" }, `${s.op}.backward`),
        h("div", { class: "rp-meta" }, `backward_steps() item ${s.index}, node ${s.node}` +
          (s.scope ? `, in module ${s.scope}` : "") + (s.site ? `, created at ${s.site}` : "")),
        h("h3", {}, "formula"), h("pre", { id: "rp-formula" }, s.formula),
        h("h3", {}, "gradient arriving at the output"),
        h("div", {}, s.output), arrayView(s.grad_output),
        h("h3", {}, "gradient sent to each input"));
      s.inputs.forEach((input, i) => {
        const div = h("div", { class: "rp-in" + (input.grad ? "" : " rp-none") },
          h("div", {}, h("b", {}, `input ${i}: `), input.label, h("span", { class: "rp-meta" },
            "  (" + input.origin + ")")));
        div.append(input.grad ? arrayView(input.grad) : h("div", { class: "rp-meta" }, input.why));
        panel.append(div);
      });
    }
    panel.append(leavesView(k));
    if (k > 0) {
      panel.append(h("details", {}, h("summary", {}, "as text: BackwardStep.explain()"),
        h("pre", {}, steps[k - 1].explain)));
    }
  }

  // ------------------------------------------------------------------ stepping
  let current = 0;
  function visible(e) {
    const a = e.getBoundingClientRect();
    const b = graph.getBoundingClientRect();
    return a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom;
  }
  function go(k) {
    k = Math.max(0, Math.min(total, k));
    if (current > 0) {
      mark(steps[current - 1].now, "rp-now", false);
      mark(steps[current - 1].flow, "rp-flow", false);
    }
    while (current < k) { current++; mark(steps[current - 1].first, "rp-reached", true); }
    while (current > k) { mark(steps[current - 1].first, "rp-reached", false); current--; }
    if (current > 0) {
      mark(steps[current - 1].now, "rp-now", true);
      mark(steps[current - 1].flow, "rp-flow", true);
    }
    counter.textContent = `step ${current} / ${total}`;
    prev.disabled = current === 0;
    next.disabled = current === total;
    const focus = el(current > 0 ? steps[current - 1].node : data.root);
    if (focus && !visible(focus)) focus.scrollIntoView({ block: "center", inline: "center" });
    render(current);
  }
  prev.onclick = () => go(current - 1);
  next.onclick = () => go(current + 1);
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const moves = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: total };
    if (event.key in moves) {
      event.preventDefault();
      go(moves[event.key]);
    }
  });
  go(0);
  window.replay = { go, total, get step() { return current; } };
})();
"""
