// The learning page's script. It reads the frames from the JSON block, builds every table,
// canvas and chart ONCE, and on each slider move only recolours cells, repaints the canvases
// and moves the chart markers (no layout is rebuilt), so a redraw stays well under 50 ms.
// window.taLearn exposes draw(), the current index and the measured times (tests read them).
(function () {
  "use strict";
  const started = performance.now();
  const root = document.getElementById("ta-learn");
  const data = JSON.parse(document.getElementById("tl-data").textContent);
  const N = data.steps.length;
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const escapeText = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;",
                                                                  ">": "&gt;", '"': "&quot;" })[c]);
  const fmt = (v, d = 3) => (v === null || v === undefined ? "–" : Number(v).toPrecision(d));
  // Axis labels: short (6.8e-4, not 0.000680), the chart's margin is narrow.
  const short = (v) => (v !== 0 && Math.abs(v) < 0.01 ? v.toExponential(1) : Number(v.toPrecision(3)));
  // A change of an attention weight: "+0.012", or "unchanged" below half the last digit.
  const change = (d) => (Math.abs(d) < 0.0005 ? "unchanged" : `${d > 0 ? "+" : "−"}${Math.abs(d).toFixed(3)}`);

  // ------------------------------------------------------------------ colours (shared palette)
  const NEG = [0x5e, 0x3c, 0x99], ZERO = [0xf7, 0xf7, 0xf7], POS = [0xe6, 0x61, 0x01];
  const mix = (a, b, t) => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t,
                            a[2] + (b[2] - a[2]) * t];
  // t in [-1, 1]: purple -> white -> orange
  const signed = (t) => (t < 0 ? mix(ZERO, NEG, Math.min(1, -t)) : mix(ZERO, POS, Math.min(1, t)))
    .map(Math.round);  // as format.value_colour rounds
  // Attention weights, 0.000 .. 1.000 in 1/1000 steps: the colours Python's
  // format.weight_colour gives (the graph's and the replay's), sent with the page.
  const SEQ_CSS = data.ramp;
  const STEPS = SEQ_CSS.length - 1;

  // ------------------------------------------------------------------ header and slider
  root.querySelector("#tl-title").textContent = data.title;
  root.querySelector("#tl-desc").textContent = data.description || "";
  const slider = root.querySelector("#tl-slider");
  const counter = root.querySelector("#tl-counter");
  const explainLine = root.querySelector("#tl-explain");
  const playButton = root.querySelector("#tl-play");
  const wholeRun = root.querySelector("#tl-whole-run");
  slider.max = String(Math.max(0, N - 1));

  // ------------------------------------------------------------------ attention tables
  const tables = data.tables.map((t, ti) => buildTable(t, ti));
  if (!tables.length) root.querySelector("#tl-attention").hidden = true;

  function buildTable(t, ti) {
    const card = el("div", t.heads > 1 ? "tl-card tl-wide" : "tl-card");
    card.dataset.table = String(ti);
    card.appendChild(el("h3", "", t.name));
    if (t.note) card.appendChild(el("p", "tl-note", t.note));
    const heads = el("div", "tl-heads");
    const R = t.rows.length, C = t.cols.length;
    const size = C > 16 ? " tl-tiny" : C > 8 ? " tl-small" : "";
    const cells = [];  // [head][row * C + col]
    for (let h = 0; h < t.heads; h++) {
      const box = el("div");
      if (t.head_names[h]) box.appendChild(el("p", "tl-head-name", t.head_names[h]));
      const table = el("table", "tl-attn" + size);
      table.dataset.head = String(h);
      const head = table.createTHead().insertRow();
      head.appendChild(el("th"));
      for (const c of t.cols) head.appendChild(el("th", "", c));
      const body = table.createTBody();
      const list = [];
      for (let r = 0; r < R; r++) {
        const row = body.insertRow();
        row.dataset.row = t.rows[r];
        const th = el("th", t.rows[r] === data.focus ? "tl-focus" : "", t.rows[r]);
        th.scope = "row";
        row.appendChild(th);
        for (let c = 0; c < C; c++) {
          const td = row.insertCell();
          td.dataset.col = t.cols[c];
          list.push(td);
        }
      }
      for (const k of t.masked) {
        if (k >= h * R * C && k < (h + 1) * R * C) {
          list[k - h * R * C].className = "tl-masked";
          list[k - h * R * C].title = "masked: 0 at every step";
        }
      }
      cells.push(list);
      box.appendChild(table);
      heads.appendChild(box);
    }
    card.appendChild(heads);
    root.querySelector("#tl-tables").appendChild(card);
    const masked = new Uint8Array(t.heads * R * C);
    for (const k of t.masked) masked[k] = 1;
    return { t, cells, R, C, masked, showText: C <= 16 };
  }

  function drawTable(view, i) {
    const values = view.t.frames[i];
    const per = view.R * view.C;
    for (let h = 0; h < view.cells.length; h++) {
      const list = view.cells[h];
      for (let k = 0; k < per; k++) {
        if (view.masked[h * per + k]) continue;
        const td = list[k];
        const v = values ? values[h * per + k] : null;
        if (v === null) {
          td.style.background = "";
          td.textContent = "";
          td.dataset.v = "";
          continue;
        }
        td.style.background = SEQ_CSS[Math.round(Math.max(0, Math.min(1, v)) * STEPS)];
        td.className = v > 0.6 ? "tl-dark" : "";
        if (view.showText) td.textContent = v.toFixed(2);
        td.dataset.v = String(v);
        td.title = `${view.t.rows[Math.floor(k / view.C)]} → ${view.t.cols[k % view.C]}: ${v}`;
      }
    }
  }

  // ------------------------------------------------------------------ line charts
  // Built as markup: the HTML parser puts <svg> children in the SVG namespace by itself.
  function lineChart(host, series, opts) {
    const W = opts.width || 600, H = opts.height || 150, L = 46, Rm = 8, T = 8, B = 18;
    const xs = data.steps;
    const finite = series.filter((v) => v !== null && isFinite(v));
    const positive = finite.length && finite.every((v) => v > 0);
    let lo = finite.length ? Math.min(...finite) : 0, hi = finite.length ? Math.max(...finite) : 1;
    const log = positive && hi / lo > 20;
    const f = log ? Math.log10 : (v) => v;
    let ylo = f(lo), yhi = f(hi);
    if (yhi - ylo < 1e-12) { ylo -= 0.5; yhi += 0.5; }
    const x0 = xs[0], x1 = xs[N - 1] === x0 ? x0 + 1 : xs[N - 1];
    const X = (s) => L + ((s - x0) / (x1 - x0)) * (W - L - Rm);
    const Y = (v) => T + (1 - (f(v) - ylo) / (yhi - ylo)) * (H - T - B);
    const text = (x, y, t, anchor) =>
      `<text x="${x}" y="${y}" text-anchor="${anchor}">${escapeText(t)}</text>`;
    let d = "";
    series.forEach((v, k) => {
      if (v === null || !isFinite(v)) return;
      d += `${d ? "L" : "M"}${X(xs[k]).toFixed(1)},${Y(v).toFixed(1)}`;
    });
    const wrap = el("div");
    wrap.innerHTML =
      `<svg viewBox="0 0 ${W} ${H}" role="img" ` +
      `aria-label="${escapeText(opts.label)}">` +
      `<path class="tl-axis" d="M${L},${T} V${H - B} H${W - Rm}"/>` +
      text(L - 4, T + 8, short(hi), "end") + text(L - 4, H - B, short(lo), "end") +
      (log ? text(L - 4, (T + H - B) / 2, "log", "end") : "") +
      text(L, H - 4, `step ${x0}`, "start") + text(W - Rm, H - 4, `step ${xs[N - 1]}`, "end") +
      `<path class="tl-line" d="${d}"/>` +
      `<line class="tl-mark" y1="${T}" y2="${H - B}"/><circle class="tl-dot" r="3.5"/></svg>`;
    const svg = wrap.firstElementChild;
    host.appendChild(svg);
    const mark = svg.querySelector(".tl-mark"), dot = svg.querySelector(".tl-dot");
    return (i) => {
      const x = X(xs[i]).toFixed(1);
      mark.setAttribute("x1", x);
      mark.setAttribute("x2", x);
      const v = series[i];
      const shown = v !== null && isFinite(v);
      dot.style.display = shown ? "" : "none";
      if (shown) { dot.setAttribute("cx", x); dot.setAttribute("cy", Y(v).toFixed(1)); }
    };
  }

  const charts = [];
  const lossHost = root.querySelector("#tl-loss");
  const lossReadout = el("p", "tl-chart-label");
  if (data.loss.some((v) => v !== null)) {
    lossHost.appendChild(lossReadout);
    charts.push(lineChart(lossHost, data.loss, { width: 1000, height: 170, label: "loss" }));
  } else {
    lossHost.textContent = "no loss recorded";
  }
  const valueReadouts = data.values.map((v) => {
    const box = el("div", "tl-chart");
    const readout = el("p", "tl-chart-label");
    box.appendChild(readout);
    charts.push(lineChart(box, v.series, { width: 1000, height: 80, label: v.name }));
    root.querySelector("#tl-values").appendChild(box);
    return { v, readout };
  });

  // ------------------------------------------------------------------ parameters
  const HEX = new Int8Array(128);
  for (let k = 0; k < 16; k++) HEX["0123456789abcdef".charCodeAt(k)] = k;
  function decode(hex) {  // two hex digits per int8 code
    const out = new Int8Array(hex.length >> 1);
    for (let k = 0; k < out.length; k++) {
      out[k] = ((HEX[hex.charCodeAt(2 * k)] << 4) | HEX[hex.charCodeAt(2 * k + 1)]) << 24 >> 24;
    }
    return out;
  }
  const params = data.params.map(buildParam);
  if (!params.length) root.querySelector("#tl-parameters").hidden = true;

  function buildMap(parent, label, labelClass, rows, cols, names) {
    const box = el("div", "tl-map");
    const name = el("span", "tl-map-label " + labelClass, label);
    const canvas = el("canvas", "tl-heat");
    canvas.width = cols;
    canvas.height = rows;
    const cell = Math.max(3, Math.min(22, Math.floor(150 / Math.max(rows, cols))));
    canvas.style.width = cols * cell + "px";
    canvas.style.height = rows * cell + "px";
    const scale = el("span", "tl-scale");
    let picture = canvas;
    if (names.rows.length && names.cols.length && cell >= 12) {
      // what the axes are: the rows down the left, the columns across the top
      picture = el("div", "tl-labelled");
      picture.appendChild(el("span"));
      const top = el("div", "tl-cols");
      for (const c of names.cols) {
        const th = el("span", "", c);
        th.style.width = cell + "px";
        top.appendChild(th);
      }
      const left = el("div", "tl-rows");
      for (const r of names.rows) {
        const th = el("span", "", r);
        th.style.height = cell + "px";
        left.appendChild(th);
      }
      picture.append(top, left, canvas);
    }
    box.style.minWidth = "110px";  // as wide as the picture (min-content), the text wraps under
    box.append(name, picture, scale);
    parent.appendChild(box);
    const ctx = canvas.getContext("2d");
    return { canvas, ctx, image: ctx.createImageData(cols, rows), scale, cell };
  }

  function buildParam(p) {
    const card = el("div", "tl-card");
    card.dataset.param = p.name;
    const title = el("h3", "", p.name + " ");
    title.appendChild(el("small", "", `(${p.shape.join(" × ")})`));
    card.appendChild(title);
    if (p.note) card.appendChild(el("p", "tl-note", p.note));
    const [rows, cols] = p.grid;
    const pair = el("div", "tl-pair");
    const names = { rows: p.rows || [], cols: p.cols || [] };
    const weight = buildMap(pair, "weight", "", rows, cols, names);
    const grad = buildMap(pair, "gradient", "tl-grad-label", rows, cols, names);
    card.appendChild(pair);
    const readout = el("p", "tl-readout");
    card.appendChild(readout);
    const chartBox = el("div", "tl-chart");
    const chartLabel = el("p", "tl-chart-label");
    chartLabel.appendChild(el("span", "tl-grad-label", "gradient norm"));
    const chartValue = el("span", "", "");
    chartLabel.appendChild(chartValue);
    chartBox.appendChild(chartLabel);
    card.appendChild(chartBox);
    root.querySelector("#tl-params").appendChild(card);
    const view = {
      p, rows, cols, weight, grad, readout, chartValue,
      codes: { weight: decode(p.weight.codes), grad: decode(p.grad.codes) },
      whole: {
        weight: Math.max(0, ...p.weight.scale.filter((s) => s !== null)) || 1,
        grad: Math.max(0, ...p.grad.scale.filter((s) => s !== null)) || 1,
      },
    };
    view.mark = lineChart(chartBox, p.grad_norm, { width: 400, height: 80,
                                                  label: p.name + " gradient norm" });
    for (const which of ["weight", "grad"]) {
      const map = view[which];
      map.canvas.addEventListener("mousemove", (e) => hover(view, which, e));
      map.canvas.addEventListener("mouseleave", () => { view.readout.textContent = ""; });
    }
    return view;
  }

  function value(view, which, i, k) {
    const s = view.p[which].scale[i];
    return s === null ? null : (view.codes[which][i * view.rows * view.cols + k] * s) / 127;
  }

  function hover(view, which, e) {
    const rect = e.target.getBoundingClientRect();
    const c = Math.floor(((e.clientX - rect.left) / rect.width) * view.cols);
    const r = Math.floor(((e.clientY - rect.top) / rect.height) * view.rows);
    if (r < 0 || c < 0 || r >= view.rows || c >= view.cols) return;
    const v = value(view, which, current, r * view.cols + c);
    const what = which === "grad" ? "gradient" : "weight";
    const where = view.p.rows && view.p.rows.length
      ? `${view.p.rows[r]} ← ${view.p.cols[c]}` : `${r}, ${c}`;
    view.readout.textContent = `${what}[${where}] ≈ ${v === null ? "none" : fmt(v)}`;
  }

  function drawMap(view, which, i) {
    const map = view[which], s = view.p[which].scale[i];
    const pixels = map.image.data, n = view.rows * view.cols;
    if (s === null) {
      for (let k = 0; k < n; k++) pixels.set([247, 247, 247, 255], 4 * k);
      map.scale.textContent = which === "grad" ? "no gradient at this step" : "not recorded";
    } else {
      // each map on its own symmetric scale, as the graph and the replay draw it; or, on
      // request, one scale over the whole run (gradients then fade as training converges)
      const ref = wholeRun.checked ? view.whole[which] : s || 1;
      const codes = view.codes[which], base = i * n, factor = s / 127 / ref;
      for (let k = 0; k < n; k++) {
        const c = signed(codes[base + k] * factor);
        pixels[4 * k] = c[0];
        pixels[4 * k + 1] = c[1];
        pixels[4 * k + 2] = c[2];
        pixels[4 * k + 3] = 255;
      }
      map.scale.textContent = s === 0 ? "all zero at this step"
        : `full colour at ±${fmt(ref)}; largest now ${fmt(s)}`;
    }
    map.ctx.putImageData(map.image, 0, 0);
  }

  // ------------------------------------------------------------------ what changed
  function topOf(view, values, h, r, exclude) {
    const per = view.R * view.C;
    let best = -1, bestV = -Infinity;
    for (let c = 0; c < view.C; c++) {
      if (c === exclude) continue;
      const v = values[h * per + r * view.C + c];
      if (v > bestV) { best = c; bestV = v; }
    }
    return best < 0 ? null : { c: best, v: bestV };
  }

  function attentionNews(i) {
    // The focus word's row in each table that has it; otherwise the row that changed most.
    const picks = [];
    for (const view of tables) {
      const now = view.t.frames[i], before = i > 0 ? view.t.frames[i - 1] : null;
      if (!now) continue;
      const square = view.R === view.C;
      const per = view.R * view.C;
      const focusRow = view.t.rows.indexOf(data.focus);
      for (let h = 0; h < view.t.heads; h++) {
        let rows = focusRow >= 0 ? [focusRow] : [...Array(view.R).keys()];
        let best = null;
        for (const r of rows) {
          let change = 0;
          if (before) {
            for (let c = 0; c < view.C; c++) {
              const k = h * per + r * view.C + c;
              change += Math.abs(now[k] - before[k]);
            }
          }
          if (!best || change > best.change) best = { view, h, r, change };
        }
        if (best) picks.push(best);
      }
    }
    if (!picks.length) return "";
    const hasFocus = data.focus && tables.some((v) => v.t.rows.includes(data.focus));
    const chosen = hasFocus ? picks.slice(0, 2)
                            : [picks.reduce((a, b) => (b.change > a.change ? b : a))];
    return chosen.map(({ view, h, r }) => {
      const square = view.R === view.C;
      const top = topOf(view, view.t.frames[i], h, r, square ? r : -1);
      if (!top) return "";
      const where = view.t.name + (view.t.head_names[h] ? ` (${view.t.head_names[h]})` : "");
      let text = `in “${where}”, “${view.t.rows[r]}” ${i ? "now " : ""}attends most to ` +
                 `“${view.t.cols[top.c]}” (${top.v.toFixed(2)}`;
      const before = i > 0 ? view.t.frames[i - 1] : null;
      if (before) {
        const k = h * view.R * view.C + r * view.C + top.c;
        text += `, ${change(top.v - before[k])}`;
        const old = topOf(view, before, h, r, square ? r : -1);
        if (old && old.c !== top.c) text += `; before: “${view.t.cols[old.c]}”`;
      }
      return text + ")";
    }).filter(Boolean).join("; ");
  }

  function explain(i) {
    const step = data.steps[i];
    const parts = [];
    const loss = data.loss[i];
    if (i === 0) {
      parts.push(`Step ${step}, the first frame` + (loss !== null ? `: loss ${fmt(loss, 4)}` : ""));
    } else {
      const prev = data.loss[i - 1];
      let text = `Since step ${data.steps[i - 1]}`;
      if (loss !== null && prev !== null) {
        const d = loss - prev;
        text += `: loss ${fmt(prev, 4)} → ${fmt(loss, 4)} (${d <= 0 ? "−" : "+"}${fmt(Math.abs(d), 2)})`;
      }
      parts.push(text);
    }
    const news = attentionNews(i);
    if (news) parts.push(news);
    let biggest = null;
    for (const view of params) {
      const g = view.p.grad_norm[i];
      if (g !== null && (!biggest || g > biggest.g)) biggest = { view, g };
    }
    if (biggest) {
      const prev = i > 0 ? biggest.view.p.grad_norm[i - 1] : null;
      parts.push(`largest gradient: ${biggest.view.p.name} (norm ${fmt(biggest.g)}` +
                 (prev !== null ? `, was ${fmt(prev)})` : ")"));
    }
    return parts.join(" · ");
  }

  // ------------------------------------------------------------------ inside a notebook
  // In an iframe (Jupyter), say how tall the page is, so the frame can fit it (learn.py's
  // _repr_html_ listens); nothing is read from the page around it.
  let toldHeight = 0;
  function tellHeight() {
    if (window.parent === window) return;
    const height = document.documentElement.scrollHeight;
    if (height === toldHeight) return;
    toldHeight = height;
    window.parent.postMessage({ taLearnHeight: height }, "*");
  }
  window.addEventListener("resize", tellHeight);

  // ------------------------------------------------------------------ drawing one frame
  let current = 0;
  const drawTimes = [];
  function draw(i) {
    const t0 = performance.now();
    i = Math.max(0, Math.min(N - 1, i | 0));
    current = i;
    slider.value = String(i);
    counter.textContent = `step ${data.steps[i]} (frame ${i + 1} / ${N})`;
    for (const view of tables) drawTable(view, i);
    for (const mark of charts) mark(i);
    lossReadout.textContent = `loss at step ${data.steps[i]}: ${fmt(data.loss[i], 4)}`;
    for (const { v, readout } of valueReadouts) {
      readout.textContent = `${v.name} at step ${data.steps[i]}: ${fmt(v.series[i], 4)}`;
    }
    for (const view of params) {
      drawMap(view, "weight", i);
      drawMap(view, "grad", i);
      view.mark(i);
      view.chartValue.textContent = `: ${fmt(view.p.grad_norm[i])} at step ${data.steps[i]}` +
                                    `; weight norm ${fmt(view.p.norm[i])}`;
    }
    explainLine.textContent = explain(i);
    tellHeight();
    const took = performance.now() - t0;
    drawTimes.push(took);
    if (drawTimes.length > 200) drawTimes.shift();
    return took;
  }

  // ------------------------------------------------------------------ play, slider, keys
  let timer = null;
  function setPlaying(on) {
    if (on && current >= N - 1) draw(0);
    if (timer) { clearInterval(timer); timer = null; }
    if (on) {
      const every = Math.max(30, Math.min(120, 6000 / N));
      timer = setInterval(() => {
        if (current >= N - 1) { setPlaying(false); return; }
        draw(current + 1);
      }, every);
    }
    playButton.innerHTML = on ? "&#10074;&#10074; pause" : "&#9654; play";
    playButton.setAttribute("aria-pressed", on ? "true" : "false");
  }
  playButton.addEventListener("click", () => setPlaying(!timer));
  slider.addEventListener("input", () => draw(Number(slider.value)));
  wholeRun.addEventListener("change", () => draw(current));

  // Inputs that are not text fields: the page's keys still work while one has focus.
  const CLICKABLE = new Set(["checkbox", "radio", "button", "submit", "reset"]);
  document.addEventListener("keydown", (e) => {
    const target = e.target;
    const tag = target && target.tagName;
    if (target && target.isContentEditable) return;
    if (target === slider) {  // the slider moves itself on arrows/Home/End; add Space
      if (e.key === " ") { e.preventDefault(); setPlaying(!timer); }
      return;
    }
    const clickable = tag === "BUTTON" || (tag === "INPUT" && CLICKABLE.has(target.type));
    if (tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && !clickable)) return;
    if (clickable && (e.key === " " || e.key === "Enter")) return;  // the control's own keys
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const jump = e.shiftKey ? 10 : 1;
    if (e.key === "ArrowRight") draw(current + jump);
    else if (e.key === "ArrowLeft") draw(current - jump);
    else if (e.key === "Home") draw(0);
    else if (e.key === "End") draw(N - 1);
    else if (e.key === " ") setPlaying(!timer);
    else return;
    if (e.key !== " " && timer) setPlaying(false);
    e.preventDefault();
  });

  // "#step=N" in the address shows training step N (the last frame at or before it), on
  // opening and whenever the address changes.
  function askedFrame() {
    const asked = /(?:^#|&)step=(\d+)/.exec(location.hash);
    let i = 0;
    if (asked) while (i + 1 < N && data.steps[i + 1] <= Number(asked[1])) i++;
    return asked ? i : null;
  }
  window.addEventListener("hashchange", () => {
    const i = askedFrame();
    if (i !== null) { setPlaying(false); draw(i); }
  });
  draw(askedFrame() || 0);
  window.taLearn = {
    draw, frames: N,
    get index() { return current; },
    get playing() { return timer !== null; },
    timings: { build: performance.now() - started, draws: drawTimes },
  };
})();
