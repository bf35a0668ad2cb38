"""Small arrays as heat maps inside graph nodes (Graphviz HTML-like tables).

An array of at most `MAX_SIDE` x `MAX_SIDE` elements (after dropping axes of length 1) is drawn
as a grid of coloured cells in the palette of `format.py`: signed values purple -> white ->
orange on their own symmetric scale (the largest |value| is full colour); attention weights
white (0) -> orange (1) on the absolute scale, the same in every picture and page. Rows and
columns carry the labels of what their axes are (axes.py). A table that prints its numbers has
cells wide enough for whole words; a colour-only table writes each column label as its
shortest unambiguous start (`r f c p b` for round, fruit, colour, planet, bright) and the
legend spells them out. Under the grid, the range.

This module only writes label markup; it decides nothing about the graph.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import numpy as np

from ..format import value_colour, weight_colour

MAX_SIDE = 16
CELL = 9  # points: a colour-only cell
WIDE_CELL = 22  # points: a cell that shows its number
FONT = 9  # the smallest text in a picture (9 pt stays >= 9 px when shown at its width)


def _text(value: object) -> str:
    return html.escape(str(value), quote=True)


# Helvetica's advance widths (1/1000 em), to size a table before Graphviz lays it out.
_WIDTHS = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz",
        [556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833]
        + [556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500],
    )
)


def text_width(text: str, size: float) -> float:
    """About how wide `text` is in Helvetica at `size` points (a little generous)."""
    units = sum(_WIDTHS.get(ch, 556 if ch.isdigit() else 667) for ch in text)
    return 1.1 * units * size / 1000


def as_grid(array: np.ndarray | None) -> np.ndarray | None:
    """The array as a 2-D grid (rows, columns), or None if it is too large (or 0-D)."""
    if array is None:
        return None
    a = np.asarray(array)
    if a.ndim == 0 or a.dtype.kind not in "fiub":
        return None
    squeezed = a.reshape([n for n in a.shape if n != 1] or [1])
    if squeezed.ndim == 1:
        squeezed = squeezed.reshape(1, -1)
    if squeezed.ndim != 2 or max(squeezed.shape) > MAX_SIDE or squeezed.size < 2:
        return None
    return squeezed.astype(np.float64)


def short_labels(labels: Sequence[str]) -> tuple[str, ...]:
    """Each label's shortest start that no other (different) label begins with: the, earth,
    is -> t, e, i. A label that begins another one stays whole (a, an -> a, an)."""
    shortened = []
    for label in labels:
        others = [other for other in labels if other != label]
        size = 1
        while size < len(label) and any(other.startswith(label[:size]) for other in others):
            size += 1
        shortened.append(label[:size])
    return tuple(shortened)


def heatmap(
    grid: np.ndarray,
    rows: Sequence[str] | None = None,
    columns: Sequence[str] | None = None,
    attention: bool = False,
    numbers: bool = False,
) -> str:
    """The markup of one heat map table. `rows` / `columns`: the labels of its axes.
    `attention`: the values are attention weights, coloured on the absolute 0 -> 1 scale.
    `numbers`: each cell shows its value (two decimals) and column labels are written whole;
    otherwise columns are labelled by `short_labels`."""
    n_rows, n_cols = grid.shape
    row_labels = rows if rows is not None and n_rows > 1 else None
    col_labels = None
    if columns is not None:
        col_labels = tuple(columns) if numbers else short_labels(columns)
    finite = grid[np.isfinite(grid)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    width = WIDE_CELL if numbers else CELL
    height = CELL + 2 if numbers else CELL
    row_height = max(height, FONT + 2) if row_labels is not None or numbers else height
    widths = [width] * n_cols
    if col_labels is not None:
        widths = [max(width, text_width(word, FONT) + 2) for word in col_labels]
    label_width = 0.0
    if row_labels is not None:
        label_width = max(text_width(word, FONT) for word in row_labels) + 3
    # Sized here: a table in a wider cell would otherwise be stretched apart by Graphviz.
    total_width = sum(widths) + label_width + len(widths) + 2
    header = col_labels is not None
    total_height = n_rows * (row_height + 1) + header * (FONT + 3) + 2
    parts = [
        '<table border="0" cellborder="0" cellspacing="1" cellpadding="0" fixedsize="true" '
        f'width="{total_width:.0f}" height="{total_height:.0f}">'
    ]
    if col_labels is not None:
        parts.append("<tr>" + ("<td></td>" if row_labels is not None else ""))
        for word in col_labels:
            parts.append(f'<td><font point-size="{FONT}">{_text(word)}</font></td>')
        parts.append("</tr>")
    for i in range(n_rows):
        parts.append("<tr>")
        if row_labels is not None:
            parts.append(
                f'<td align="right"><font point-size="{FONT}">{_text(row_labels[i])}</font></td>'
            )
        for j in range(n_cols):
            v = grid[i, j]
            colour = weight_colour(v) if attention else value_colour(v, scale)
            body = f'<font point-size="{FONT}">{v:.2f}</font>' if numbers else ""
            parts.append(
                f'<td bgcolor="{colour}" width="{widths[j]:.0f}" height="{height}" '
                f'fixedsize="true">{body}</td>'
            )
        parts.append("</tr>")
    parts.append("</table>")
    return "".join(parts)


def value_range(grid: np.ndarray) -> str:
    """`-0.61 … 0.83`: the smallest and largest value of a heat map."""
    finite = grid[np.isfinite(grid)]
    if not finite.size:
        return "no finite value"
    return f"{finite.min():.2g} … {finite.max():.2g}"


def makes_attention_weights(node: object) -> bool:
    """Whether an op's result is a table of attention weights (a softmax, or a softmax with
    masked entries set to 0): drawn on the absolute 0 -> 1 scale in every picture and page."""
    name = getattr(node, "name", None)
    if name == "Softmax":
        return True
    if name == "MaskedFill":
        parent = getattr(node, "parents", (None,))[0]
        return getattr(parent, "name", None) == "Softmax"
    return False
