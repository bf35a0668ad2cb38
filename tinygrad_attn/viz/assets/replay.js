// The replay page's script: steps through the backward pass recorded in #rp-data over the SVG.
// Python precomputed, per step, which SVG elements to highlight; this only toggles classes,
// draws the side panel, and keeps the current node (and the parameter it updates) in view.
(function () {
  "use strict";
  const root = document.getElementById("rp-root");
  const data = JSON.parse(document.getElementById("rp-data").textContent);
  const steps = data.steps;
  const total = steps.length;
  const graph = root.querySelector("#rp-graph");
  const svg = graph.querySelector("svg");
  const panel = root.querySelector("#rp-panel");
  const counter = root.querySelector("#rp-counter");
  const prev = root.querySelector("#rp-prev");
  const next = root.querySelector("#rp-next");
  const palette = data.palette;
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

  // ------------------------------------------------------------------ zoom and minimap
  const READABLE = 0.75;  // below this zoom the picture's 9 pt text is under 9 px
  const box = svg.viewBox.baseVal;
  const natural = { w: box.width * 4 / 3, h: box.height * 4 / 3 };  // pt -> px
  let zoom = 1;
  function setZoom(z) {
    zoom = Math.max(0.1, Math.min(3, z));
    svg.style.width = natural.w * zoom + "px";
    svg.style.height = natural.h * zoom + "px";
    updateMinimap();
  }
  function fitZoom() {
    const whole = Math.min(graph.clientWidth / natural.w, graph.clientHeight / natural.h);
    return Math.min(1, Math.max(READABLE, whole));  // the whole graph, if its text stays readable
  }
  const minimap = root.querySelector("#rp-minimap");
  const view = root.querySelector("#rp-minimap-view");
  const image = root.querySelector("#rp-minimap-img");
  image.src = URL.createObjectURL(new Blob([svg.outerHTML], { type: "image/svg+xml" }));
  function updateMinimap() {
    const overflows = graph.scrollWidth > graph.clientWidth + 1 ||
      graph.scrollHeight > graph.clientHeight + 1;
    minimap.style.display = overflows ? "block" : "none";
    if (!overflows) return;
    const scale = minimap.clientWidth / graph.scrollWidth;
    view.style.left = graph.scrollLeft * scale + "px";
    view.style.top = graph.scrollTop * scale + "px";
    view.style.width = graph.clientWidth * scale + "px";
    view.style.height = Math.min(graph.clientHeight * scale, minimap.clientHeight) + "px";
  }
  graph.addEventListener("scroll", updateMinimap);
  minimap.addEventListener("click", (event) => {
    const rect = minimap.getBoundingClientRect();
    const scale = graph.scrollWidth / rect.width;
    graph.scrollLeft = (event.clientX - rect.left) * scale - graph.clientWidth / 2;
    graph.scrollTop = (event.clientY - rect.top) * scale - graph.clientHeight / 2;
  });
  root.querySelector("#rp-zoom-in").onclick = () => setZoom(zoom * 1.25);
  root.querySelector("#rp-zoom-out").onclick = () => setZoom(zoom / 1.25);
  root.querySelector("#rp-zoom-fit").onclick = () => setZoom(fitZoom());
  setZoom(fitZoom());

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
      // colours computed in Python by the graph's own functions: one colour per value
      const table = h("table", { class: a.attention ? "rp-attention" : "" });
      const rowNames = a.rows.length > 1 ? a.row_labels : undefined;
      const colNames = a.col_labels;
      if (colNames) {
        const tr = h("tr", {}, rowNames ? h("th") : null);
        for (const name of colNames) tr.append(h("th", {}, name));
        table.append(tr);
      }
      a.rows.forEach((row, i) => {
        const tr = h("tr", {}, rowNames ? h("th", {}, rowNames[i]) : null);
        row.forEach((v, j) => {
          const td = h("td", { title: num(v) }, cell(v));
          td.style.background = a.colours ? a.colours[i][j] : palette.zero;
          tr.append(td);
        });
        table.append(tr);
      });
      wrap.append(table);
      if (a.attention) wrap.append(h("div", { class: "rp-meta" }, "attention weights: white 0 \u2192 orange 1"));
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
        h("p", {}, `The forward pass is done (green edges). ${total} backward steps follow ` +
          `(BackwardStep.index 0 to ${total - 1}), one per op, from the loss back to the ` +
          "parameters: press \u2192 to run the first."),
      );
    } else {
      const s = steps[k - 1];
      panel.append(h("h2", { id: "rp-op" }, `${s.op}.backward`));
      if (s.in_place) panel.append(h("div", { class: "rp-meta" }, `recorded in place: ${s.in_place}`));
      if (s.made_by) panel.append(h("div", { class: "rp-meta rp-made-by" },
          `an op of an earlier backward pass (create_graph=True): ${s.made_by}`));
      panel.append(h("div", { class: "rp-meta" }, `step ${s.index} (BackwardStep.index), node ${s.node}` +
          (s.scope ? `, in module ${s.scope}` : "") + (s.site ? `, created at ${s.site}` : "")),
        h("h3", {}, "formula"), h("pre", { id: "rp-formula" }, s.formula));
      if (s.forward.length) {
        panel.append(h("h3", {}, "forward values the formula uses"));
        for (const f of s.forward) panel.append(h("div", {}, f.label), arrayView(f.value));
      }
      panel.append(h("h3", {}, "gradient arriving at the output"),
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
  function visible(e, frame) {
    const a = e.getBoundingClientRect();
    const b = frame.getBoundingClientRect();
    return a.left >= b.left && a.right <= b.right && a.top >= b.top && a.bottom <= b.bottom;
  }
  function reveal(e, frame) {
    // only the graph scrolls (never the page), and no further than needed
    if (!e || visible(e, frame)) return;
    const a = e.getBoundingClientRect();
    const b = frame.getBoundingClientRect();
    let dx = 0, dy = 0;
    if (a.left < b.left) dx = a.left - b.left - 20;
    else if (a.right > b.right) dx = Math.min(a.right - b.right + 20, a.left - b.left - 20);
    if (a.top < b.top) dy = a.top - b.top - 20;
    else if (a.bottom > b.bottom) dy = Math.min(a.bottom - b.bottom + 20, a.top - b.top - 20);
    frame.scrollBy(dx, dy);
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
    counter.textContent = current === 0 ? `before backward \u00b7 0 of ${total} run`
      : `step ${steps[current - 1].index} \u00b7 ${current} of ${total} run`;
    prev.disabled = current === 0;
    next.disabled = current === total;
    render(current);
    panel.scrollTop = 0;  // the step's op and formula first; the parameters below
    if (current > 0) {
      const s = steps[current - 1];
      for (const id of s.params) reveal(el(id), graph);  // the parameter it updates ...
      reveal(el(s.node), graph);  // ... and, first of all, the op itself
    } else {
      graph.scrollTo(0, 0);  // the start of the picture: its legend, X, the parameters
    }
    updateMinimap();
  }
  prev.onclick = () => go(current - 1);
  next.onclick = () => go(current + 1);
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName))) {
      return;  // typing in a text field: the keys are not ours
    }
    const moves = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: total };
    if (event.key in moves) {
      event.preventDefault();
      go(moves[event.key]);
    }
  });
  const start = /^#step=(\d+)$/.exec(window.location.hash);  // page.html#step=6 opens there
  go(start ? Number(start[1]) : 0);
  window.replay = { go, total, get step() { return current; } };
})();
