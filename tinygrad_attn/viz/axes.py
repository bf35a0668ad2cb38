"""What each axis of each tensor of a picture is: labels that follow the maths, not the lengths.

A person names the axes of a few tensors, by the tensors' names:

    axis_labels={"X": (words, features), "target": (features,)}

and every other axis that is the same thing gets the same labels, because the ops say so:

- an elementwise op (`+`, `×`, softmax, layer norm, ...) keeps each axis (broadcasting aligns
  them from the right; an axis of length 1 carries nothing);
- `Transpose` moves axes; `Reshape` keeps the axes at either end whose lengths do not change;
- `a @ b`: the rows of the result are a's rows, its columns b's columns, and a's columns are
  b's rows (the axis the product sums over);
- `Linear` (`x Wᵀ + b`): W's rows are the output features (the result's last axis, and b's),
  W's columns the input features (x's last axis);
- the fused attention: the result's rows are the queries, its columns the values' features;
  q and k share their features, k and v their positions;
- an index keeps the axes it slices (with the labels sliced) and drops those it picks;
- a reduction keeps the axes it does not reduce.

So in `X Wᵀ` the weight's columns are X's columns (the article's features) and its rows are
whatever the layer's output axis is; a gradient has the labels of its tensor. Labels spread
until nothing changes; the first labels to reach an axis win (the given ones first).

This module only computes labels; it draws nothing (heatmap.py and the pages do).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .trace import TracedGraph

Labels = tuple  # one entry per axis: a tuple of str, or None (unlabelled)

_REDUCTIONS = {"Sum", "Mean", "Max", "Min", "Var", "Prod", "Norm", "LogSumExp"}
# ops whose result keeps no axis of an input in a way the right-aligned rule could tell
_NO_AXES = {"Flip", "Roll", "Einsum", "CrossEntropy", "Cumsum"}


def check_labels(caller: str, axis_labels: Any) -> dict[str, Labels] | None:
    """`axis_labels` as {tensor name: (labels or None, ...)} with str labels, or a clear error."""
    if axis_labels is None:
        return None
    if not isinstance(axis_labels, Mapping):
        raise TypeError(
            f"{caller}: axis_labels must be a dict {{tensor name: labels of each axis}}, e.g. "
            f"{{'X': (words, features)}}; got {type(axis_labels).__name__}"
        )
    checked: dict[str, Labels] = {}
    for name, per_axis in axis_labels.items():
        if not isinstance(name, str):
            raise TypeError(
                f"{caller}: axis_labels are given per tensor, by its name: "
                f"{{'X': (words, features)}} labels X's rows and columns. Got the key {name!r}: "
                "an axis length says nothing about what the axis is"
            )
        if isinstance(per_axis, str) or not isinstance(per_axis, Sequence):
            raise TypeError(
                f"{caller}: axis_labels[{name!r}] must list one entry per axis of {name} (labels "
                f"or None), e.g. (words, None); got {per_axis!r}"
            )
        checked[name] = tuple(
            None if axis is None else tuple(str(label) for label in axis) for axis in per_axis
        )
    return checked


class AxisLabels:
    """The labels of every axis of every tensor record of a traced graph (see the module doc).

    `of(record_id)`: a tuple with one entry per axis (a tuple of labels, or None).
    `grid(record_id, shape)`: the (row labels, column labels) of the heat map of that tensor,
    which drops axes of length 1 (see heatmap.as_grid).
    """

    def __init__(self, traced: TracedGraph, given: Mapping[str, Labels] | None, caller: str):
        self.shapes = {record.id: tuple(record.shape) for record in traced.tensors}
        self.labels: dict[tuple[str, int], tuple[str, ...]] = {}
        if not given:
            return
        by_name: dict[str, list] = {}
        for record in traced.tensors:
            if record.name:
                by_name.setdefault(record.name, []).append(record)
        for name, per_axis in given.items():
            records = by_name.get(name)
            if not records:
                known = ", ".join(sorted(by_name)) or "none: no tensor of this graph has a name"
                raise ValueError(
                    f"{caller}: axis_labels names {name!r}, but no tensor of this graph is "
                    f"called that; the named tensors are: {known}"
                )
            for record in records:
                if len(per_axis) != len(record.shape):
                    raise ValueError(
                        f"{caller}: axis_labels[{name!r}] has {len(per_axis)} entries, but "
                        f"{name} has shape {tuple(record.shape)}: give one per axis (None for "
                        "an axis left unlabelled)"
                    )
                for axis, labels in enumerate(per_axis):
                    if labels is None:
                        continue
                    if len(labels) != record.shape[axis]:
                        raise ValueError(
                            f"{caller}: axis_labels[{name!r}] gives {len(labels)} labels for "
                            f"axis {axis} of {name}, whose shape is {tuple(record.shape)}: "
                            f"give one label per index ({record.shape[axis]})"
                        )
                    self.labels[(record.id, axis)] = labels
        self._spread(_links(traced, self.shapes))

    def _spread(self, links: list) -> None:
        """Copy labels along the links until nothing changes."""
        changed = True
        while changed:
            changed = False
            for a, b, part in links:
                if a in self.labels and b not in self.labels:
                    labels = self.labels[a] if part is None else self.labels[a][part]
                    if len(labels) == self.shapes[b[0]][b[1]]:
                        self.labels[b] = labels
                        changed = True
                if part is None and b in self.labels and a not in self.labels:
                    self.labels[a] = self.labels[b]
                    changed = True

    def of(self, record_id: str) -> Labels:
        shape = self.shapes.get(record_id, ())
        return tuple(self.labels.get((record_id, axis)) for axis in range(len(shape)))

    def grid(self, record_id: str, shape: Sequence[int]) -> tuple:
        """(row labels, column labels) of the heat map of an array of `shape` (this record's
        value or gradient): the axes longer than 1, as heatmap.as_grid keeps them."""
        per_axis = self.of(record_id) if tuple(shape) == self.shapes.get(record_id) else ()
        kept = [labels for labels, n in zip(per_axis, shape) if n != 1]
        if len(kept) == 1:
            return None, kept[0]
        if len(kept) == 2:
            return kept[0], kept[1]
        return None, None

    def __bool__(self) -> bool:
        return bool(self.labels)


# ----------------------------------------------------------------------------- the links
def _links(traced: TracedGraph, shapes: dict) -> list:
    """(axis, axis, part) triples: `part` None means the two axes are the same thing (labels go
    both ways); a slice means the second axis is the first one sliced (labels go forward)."""
    inputs: dict[str, dict[int, str]] = {}
    for edge in traced.edges:
        if edge.position is not None:
            inputs.setdefault(edge.dst, {})[edge.position] = edge.src
    links: list = []
    for op in traced.ops:
        given = inputs.get(op.id, {})
        ins = [given[i] for i in sorted(given)]
        links += _op_links(op.node, ins, op.output.id, shapes)
    return links


def _same(a: str, i: int, b: str, j: int) -> tuple:
    return ((a, i), (b, j), None)


def _aligned(a: str, a_axes: range, b: str, b_axes: range, shapes: dict) -> list:
    """Links between axes of a and b aligned from the right (broadcasting), equal lengths > 1."""
    links = []
    for i, j in zip(reversed(a_axes), reversed(b_axes)):
        if shapes[a][i] == shapes[b][j] and shapes[a][i] > 1:
            links.append(_same(a, i, b, j))
    return links


def _op_links(node: Any, ins: list[str], out: str, shapes: dict) -> list:
    name = node.name
    rank = len(shapes[out])
    whole = range(rank)
    if name in _NO_AXES or not ins:
        return []
    if name == "Transpose":
        axes = getattr(node, "axes", None) or tuple(reversed(range(rank)))
        return [_same(ins[0], a, out, i) for i, a in enumerate(axes)]
    if name == "Reshape":
        return _reshape_links(ins[0], out, shapes)
    if name == "MatMul" and len(ins) == 2:
        return _matmul_links(ins[0], ins[1], out, shapes)
    if name == "Linear":
        x, w = ins[0], ins[1]
        links = [_same(x, len(shapes[x]) - 1, w, 1), _same(w, 0, out, rank - 1)]
        links += _aligned(x, range(len(shapes[x]) - 1), out, range(rank - 1), shapes)
        if len(ins) > 2:
            links.append(_same(ins[2], 0, w, 0))
        return links
    if name == "ScaledDotProductAttention":
        q, k, v = ins[:3]
        links = [
            _same(q, len(shapes[q]) - 2, out, rank - 2),
            _same(v, len(shapes[v]) - 1, out, rank - 1),
            _same(q, len(shapes[q]) - 1, k, len(shapes[k]) - 1),
            _same(k, len(shapes[k]) - 2, v, len(shapes[v]) - 2),
        ]
        return links + _aligned(q, range(len(shapes[q]) - 2), out, range(rank - 2), shapes)
    if name == "GetItem":
        return _index_links(ins[0], out, getattr(node, "index", None), shapes)
    if name == "Stack":
        axis = getattr(node, "axis", 0)
        return [_same(x, i, out, i if i < axis else i + 1) for x in ins for i in range(rank - 1)]
    if name in _REDUCTIONS or (hasattr(node, "axes") and hasattr(node, "keepdims")):
        return _reduction_links(node, ins[0], out, shapes)
    # elementwise (and everything shaped like it): the result is the inputs broadcast
    try:
        broadcast = np.broadcast_shapes(*(shapes[i] for i in ins))
    except ValueError:
        return []
    if tuple(broadcast) != shapes[out]:
        return []
    links = []
    for i in ins:
        links += _aligned(i, range(len(shapes[i])), out, whole, shapes)
    return links


def _matmul_links(a: str, b: str, out: str, shapes: dict) -> list:
    na, nb, rank = len(shapes[a]), len(shapes[b]), len(shapes[out])
    if na == 0 or nb == 0:
        return []
    if na == 1 and nb == 1:
        return [_same(a, 0, b, 0)]
    if nb == 1:  # (..., n, k) @ (k,) -> (..., n)
        return [_same(a, na - 1, b, 0)] + _aligned(a, range(na - 1), out, range(rank), shapes)
    if na == 1:  # (k,) @ (..., k, m) -> (..., m)
        return [_same(a, 0, b, nb - 2), _same(b, nb - 1, out, rank - 1)]
    links = [
        _same(a, na - 2, out, rank - 2),  # the rows: a's rows
        _same(b, nb - 1, out, rank - 1),  # the columns: b's columns
        _same(a, na - 1, b, nb - 2),  # the axis the product sums over
    ]
    links += _aligned(a, range(na - 2), out, range(rank - 2), shapes)
    return links + _aligned(b, range(nb - 2), out, range(rank - 2), shapes)


def _reshape_links(a: str, out: str, shapes: dict) -> list:
    """The leading and trailing axes whose lengths a reshape leaves as they were."""
    before, after = shapes[a], shapes[out]
    links = []
    i = 0
    while i < min(len(before), len(after)) and before[i] == after[i]:
        links.append(_same(a, i, out, i))
        i += 1
    j = 1
    while j <= min(len(before), len(after)) - i and before[-j] == after[-j]:
        links.append(_same(a, len(before) - j, out, len(after) - j))
        j += 1
    return links


def _reduction_links(node: Any, a: str, out: str, shapes: dict) -> list:
    rank_in = len(shapes[a])
    axes = getattr(node, "axes", None)
    reduced = set(range(rank_in)) if axes is None else {int(x) % max(rank_in, 1) for x in axes}
    keep = bool(getattr(node, "keepdims", False))
    links, position = [], 0
    for i in range(rank_in):
        if i in reduced:
            position += keep
            continue
        if position < len(shapes[out]):
            links.append(_same(a, i, out, position))
        position += 1
    return links


def _index_links(a: str, out: str, index: Any, shapes: dict) -> list:
    """Basic indexing (ints, slices, None, ...): a slice keeps its axis (labels sliced), an int
    drops it. Integer arrays first (`weight[ids]`, `h[rows, cols]`): the axes after them."""
    before = shapes[a]
    parts = index if isinstance(index, tuple) else (index,)
    arrays = [p for p in parts if isinstance(p, (np.ndarray, list))]
    if any(np.asarray(p).dtype == np.bool_ for p in arrays):
        return []  # a mask: the axes it covers become one
    if arrays:
        taken = 0
        while taken < len(parts) and isinstance(parts[taken], (np.ndarray, list)):
            taken += 1
        rest = parts[taken:]
        if taken != len(arrays) or any(p != slice(None) for p in rest if p is not Ellipsis):
            return []
        kept = range(taken, len(before))
        return _aligned(a, kept, out, range(len(shapes[out])), shapes)
    if Ellipsis in [p for p in parts if not isinstance(p, (np.ndarray, list))]:
        at = next(i for i, p in enumerate(parts) if p is Ellipsis)
        fill = len(before) - sum(1 for p in parts if p is not None and p is not Ellipsis)
        parts = (*parts[:at], *(slice(None),) * fill, *parts[at + 1 :])
    links = []
    axis, position = 0, 0
    for part in parts:
        if part is None:
            position += 1
            continue
        if axis >= len(before):
            return links
        if isinstance(part, slice):
            whole = part == slice(None) or range(*part.indices(before[axis])) == range(before[axis])
            links.append(((a, axis), (out, position), None if whole else part))
            position += 1
        elif not isinstance(part, (int, np.integer)):
            return links
        axis += 1
    while axis < len(before):  # the axes the index did not mention are kept whole
        links.append(_same(a, axis, out, position))
        axis += 1
        position += 1
    return links
