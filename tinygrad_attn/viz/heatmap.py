"""Small arrays as heat maps inside graph nodes (Graphviz HTML-like tables).

An array of at most `MAX_SIDE` x `MAX_SIDE` elements (after dropping axes of length 1) is drawn
as a grid of coloured cells in the palette of `format.py`: signed values purple -> white ->
orange, values that are never negative (attention weights) white -> orange. Rows and columns
are labelled when the picture knows labels for an axis of that length (`axis_labels`): row
labels always, column labels in tables whose cells are wide enough to carry numbers (the
attention table, which shows every weight with two decimals). Under the grid, the range.

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


def heatmap(
    grid: np.ndarray,
    labels: dict[int, Sequence[str]] | None = None,
    weights: bool = False,
) -> str:
    """The markup of one heat map table. `weights=True`: values in [0, 1] (attention
    weights) in the white -> orange palette, each cell showing its number."""
    rows, cols = grid.shape
    labels = labels or {}
    row_labels = labels.get(rows) if rows > 1 else None
    col_labels = labels.get(cols) if weights else None
    finite = grid[np.isfinite(grid)]
    scale = float(np.abs(finite).max()) if finite.size else 0.0
    non_negative = finite.size > 0 and finite.min() >= 0
    width = WIDE_CELL if weights else CELL
    height = CELL + 2 if weights else CELL
    row_height = max(height, FONT + 2) if row_labels is not None or weights else height
    columns = [width] * cols
    if col_labels is not None:
        columns = [max(width, text_width(word, FONT) + 2) for word in col_labels]
    label_width = 0.0
    if row_labels is not None:
        label_width = max(text_width(word, FONT) for word in row_labels) + 3
    # Sized here: a table in a wider cell would otherwise be stretched apart by Graphviz.
    total_width = sum(columns) + label_width + len(columns) + 2
    total_height = (rows + (col_labels is not None)) * (row_height + 1) + 2
    parts = [
        '<table border="0" cellborder="0" cellspacing="1" cellpadding="0" fixedsize="true" '
        f'width="{total_width:.0f}" height="{total_height:.0f}">'
    ]
    if col_labels is not None:
        parts.append("<tr>" + ("<td></td>" if row_labels is not None else ""))
        for word in col_labels:
            parts.append(f'<td><font point-size="{FONT}">{_text(word)}</font></td>')
        parts.append("</tr>")
    for i in range(rows):
        parts.append("<tr>")
        if row_labels is not None:
            parts.append(
                f'<td align="right"><font point-size="{FONT}">{_text(row_labels[i])}</font></td>'
            )
        for j in range(cols):
            v = grid[i, j]
            if weights or non_negative:
                colour = weight_colour(v, 1.0 if weights else scale)
            else:
                colour = value_colour(v, scale)
            body = f'<font point-size="{FONT}">{v:.2f}</font>' if weights else ""
            parts.append(
                f'<td bgcolor="{colour}" width="{width}" height="{height}" fixedsize="true">'
                f"{body}</td>"
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
