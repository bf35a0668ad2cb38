"""The learning page: a recorded training run as one self-contained HTML file.

`LearningPage(recorder)` (what `Recorder.page()` returns) turns the recorder's frames into one
HTML page: a step slider with play/pause and keys; per attention table a heat map labelled with
its words (one per head); the loss curve with the current step marked; per parameter its weight
matrix and gradient as heat maps and the gradient norm over time; and a line saying what
changed since the previous frame. `.save(path)` writes it, `.html` is its text, and in Jupyter
it shows inline (`_repr_html_`: an iframe whose `srcdoc` is the page, so its CSS and keys stay
inside).

Colours (shared with the graph pictures and the replay page, so a colour means one thing
everywhere): signed values (weights, gradients) purple #5e3c99 (negative) -> white #f7f7f7
(zero) -> orange #e66101 (positive), each map on its own symmetric scale (its largest |value| is
full colour) unless the reader asks for one scale over the whole run; attention weights white
(0) -> orange (1), on the absolute scale, from the colour ramp `format.weight_colour` gives
(sent with the page, so a weight has the graph's exact colour). The red #d62728 marks gradient
LABELS only, never a value cell. A parameter's rows and columns carry the labels the recorder
was given (`Recorder.label`): for a Linear weight, its output features down, its inputs across.

The HTML, CSS and script are package data files (assets/learn.*), read with
importlib.resources;
this module only packs the frames as JSON: attention tables as numbers (3 decimals),
parameters and gradients as 8-bit codes (hex) with one scale per frame (a heat map needs no more;
the page shows each cell's value on hover as code * scale / 127). It must not train or record.
"""

from __future__ import annotations

import html
import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..format import weight_colour
from .record import Frame, Recorder

ASSETS = "assets"
RAMP = 1000  # steps of the attention colour ramp the page carries


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(ASSETS, name).read_text(encoding="utf-8")


def _matrix(array: np.ndarray) -> np.ndarray:
    """A parameter as the 2-D picture the page draws: 1-D as one row, N-D as (-1, last axis)."""
    if array.ndim == 0:
        return array.reshape(1, 1)
    if array.ndim == 1:
        return array.reshape(1, -1)
    return array.reshape(-1, array.shape[-1])


def _codes(arrays: list[np.ndarray | None], shape: tuple[int, int]) -> dict:
    """Arrays of one parameter over the frames as int8 codes (hex, frames one after the other)
    with each frame's scale (max |value|; None where the frame has no array). Hex, not base64:
    base64 text can spell "http" by chance, and the page must be free of it."""
    blocks, scales = [], []
    for array in arrays:
        if array is None:
            blocks.append(np.zeros(shape, np.int8))
            scales.append(None)
            continue
        a = np.nan_to_num(_matrix(array).astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        top = float(np.abs(a).max()) if a.size else 0.0
        scale = top if top > 0 else 1.0
        blocks.append(np.round(a / scale * 127).astype(np.int8))
        scales.append(float(f"{top:.5g}"))
    raw = np.concatenate([b.ravel() for b in blocks]).tobytes() if blocks else b""
    return {"scale": scales, "codes": raw.hex()}


def _number(value: float | None, digits: int = 5) -> float | None:
    if value is None or not np.isfinite(value):
        return None
    return float(f"{value:.{digits}g}")


class LearningPage:
    """A recorded run as an HTML page: `.html`, `.save(path)`, and inline display in Jupyter.

    `focus`: a word whose attention row the page explains ("orange" -> which word it attends
    to most); without it, the row that changed most. `params`: the names to draw (default: all
    recorded). `title`: the page title (default: the recorder's).
    """

    def __init__(
        self,
        recorder: Recorder,
        title: str | None = None,
        focus: str | None = None,
        params: list[str] | None = None,
        description: str = "",
    ) -> None:
        if not isinstance(recorder, Recorder):
            raise TypeError(
                f"LearningPage: expected a Recorder, got {type(recorder).__name__}; record a "
                "run with tinygrad_attn.viz.record.Recorder first"
            )
        if not recorder.frames:
            raise ValueError(
                "LearningPage: the recorder holds no frames; call recorder.record(step, ...) "
                "inside the training loop first"
            )
        self.title = title or recorder.title
        self.data = _page_data(recorder, self.title, focus, params, description)
        self._html: str | None = None

    @property
    def html(self) -> str:
        """The whole page, one self-contained HTML document."""
        if self._html is None:
            payload = json.dumps(self.data, separators=(",", ":"), allow_nan=False)
            # No "<" at all inside the script element: "</script>" or "<!--" in a name must
            # neither end it nor change how the HTML parser reads it. JSON reads \u003c as "<".
            payload = payload.replace("<", "\\u003c")
            parts = {
                "TITLE": html.escape(self.title),
                "CSS": _asset("learn.css"),
                "DATA": payload,
                "SCRIPT": _asset("learn.js"),
            }
            # One pass over the template: a placeholder inside the data is left as it is.
            page = re.sub(
                r"__(TITLE|CSS|DATA|SCRIPT)__", lambda m: parts[m[1]], _asset("learn.html")
            )
            self._html = page
        return self._html

    def save(self, path: str | os.PathLike = "learn.html") -> Path:
        """Write the page to `path` (folders made as needed); returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.html, encoding="utf-8")
        return path

    def _repr_html_(self) -> str:
        """Jupyter: the page in an iframe (`srcdoc`), so its CSS, script and keys stay inside.
        The frame is as wide as the cell (its border inside that width: no sideways scrollbar)
        and as tall as the page: its first height is estimated from what the page holds, and
        the page tells the notebook its real height once drawn (a message the small script
        beside the frame reads), so the page does not scroll inside the notebook."""
        doc = html.escape(self.html, quote=True)
        frame = f"ta-learn-{id(self):x}"
        return (
            f'<iframe id="{frame}" class="ta-learn-frame" srcdoc="{doc}" '
            f'title="{html.escape(self.title)}" style="display:block;box-sizing:border-box;'
            f"width:100%;height:{self.estimated_height()}px;border:1px solid #ddd;"
            'border-radius:4px" sandbox="allow-scripts"></iframe>'
            "<script>(function () {"
            f'const frame = document.getElementById("{frame}");'
            'window.addEventListener("message", (event) => {'
            "if (!frame || event.source !== frame.contentWindow) return;"
            "const height = event.data && event.data.taLearnHeight;"
            'if (height > 0) frame.style.height = Math.ceil(height) + 2 + "px";'
            "});})();</script>"
        )

    def estimated_height(self) -> int:
        """About how tall the page is at a notebook's width (~900 px), in pixels."""
        data = self.data
        height = 230  # title, description, keys, slider, the line on what changed
        rows = [len(t["rows"]) * (t["heads"] if t["heads"] > 1 else 1) for t in data["tables"]]
        if rows:
            height += 70 + max(rows) * 26 + 60
        height += 60 + 190 + 110 * len(data["values"])  # the loss and the other numbers
        cards = len(data["params"])
        if cards:
            per_row = 2
            height += 60 + -(-cards // per_row) * 400
        return int(height)

    def __repr__(self) -> str:
        frames = self.data["steps"]
        return f"LearningPage({self.title!r}, {len(frames)} frames, {len(self.html) / 1e6:.2f} MB)"


def _page_data(
    recorder: Recorder,
    title: str,
    focus: str | None,
    wanted: list[str] | None,
    description: str,
) -> dict[str, Any]:
    frames: list[Frame] = recorder.frames
    table_names = list(dict.fromkeys(n for f in frames for n in f.attention))
    param_names = list(dict.fromkeys(n for f in frames for n in f.params))
    if wanted is not None:
        missing = [n for n in wanted if n not in param_names]
        if missing:
            raise ValueError(
                f"LearningPage: no recorded parameter named {missing}; recorded: {param_names}"
            )
        param_names = list(wanted)
    tables = [_table(recorder, frames, name) for name in table_names]
    params = [_param(recorder, frames, name) for name in param_names]
    value_names = list(dict.fromkeys(n for f in frames for n in f.values))
    return {
        "title": title,
        "description": description,
        "focus": focus,
        "steps": [f.step for f in frames],
        "loss": [_number(f.loss) for f in frames],
        "values": [
            {"name": n, "series": [_number(f.values.get(n)) for f in frames]} for n in value_names
        ],
        "tables": tables,
        "params": params,
        # weight_colour(i / 1000): the attention cells look their colour up here
        "ramp": [weight_colour(i / RAMP) for i in range(RAMP + 1)],
    }


def _table(recorder: Recorder, frames: list[Frame], name: str) -> dict[str, Any]:
    shape = next(f.attention[name].shape for f in frames if name in f.attention)
    if len(shape) < 2:
        raise ValueError(
            f"LearningPage: attention table {name!r} has shape {shape}; expected (T, S) or "
            "(..., T, S), one row per query"
        )
    rows_n, cols_n = shape[-2], shape[-1]
    heads = int(np.prod(shape[:-2], dtype=np.int64))
    rows, cols = recorder.labels.get(name, ([], []))
    if len(rows) != rows_n or len(cols) != cols_n:
        rows, cols = [str(i) for i in range(rows_n)], [str(j) for j in range(cols_n)]
    series = []
    never = np.ones(heads * rows_n * cols_n, dtype=bool)  # cells that are 0 in every frame
    for f in frames:
        table = f.attention.get(name)
        if table is None or table.shape != shape:
            series.append(None)
            continue
        flat = np.nan_to_num(table.astype(np.float64)).reshape(-1)  # heads * rows * cols
        never &= flat == 0
        series.append([round(float(v), 3) for v in flat])
    return {
        "name": name,
        "rows": rows,
        "cols": cols,
        "heads": heads,
        "head_names": _head_names(shape[:-2]),
        "note": recorder.notes.get(name, ""),
        "frames": series,
        # exactly 0 in every frame: masked (a causal mask's upper triangle), drawn empty
        "masked": np.flatnonzero(never).tolist() if len(frames) > 1 else [],
    }


def _head_names(lead: tuple[int, ...]) -> list[str]:
    if not lead:
        return [""]
    names = [""]
    for axis, size in enumerate(lead):
        label = "head " if axis == len(lead) - 1 else "#"
        names = [f"{n}{', ' if n else ''}{label}{i}" for n in names for i in range(size)]
    return names


def _param(recorder: Recorder, frames: list[Frame], name: str) -> dict[str, Any]:
    original = next(f.params[name].shape for f in frames if name in f.params)
    shape = _matrix(np.zeros(original, np.int8)).shape
    weights = [f.params.get(name) for f in frames]
    grads = [f.grads.get(name) for f in frames]
    weights = [w if w is not None and w.shape == original else None for w in weights]
    grads = [g if g is not None and g.shape == original else None for g in grads]
    rows, cols = recorder.labels.get(name, ([], []))
    if (len(rows), len(cols)) != shape:  # labels only where they name every row and column
        rows, cols = [], []
    return {
        "name": name,
        "shape": list(original),
        "grid": list(shape),
        "rows": rows,
        "cols": cols,
        "note": recorder.notes.get(name, ""),
        "weight": _codes(weights, shape),
        "grad": _codes(grads, shape),
        "grad_norm": [_number(f.grad_norm(name)) for f in frames],
        "norm": [
            None if w is None else _number(float(np.linalg.norm(w.astype(np.float64))))
            for w in weights
        ],
    }
