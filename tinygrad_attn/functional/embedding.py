"""Integer ids to rows: `embedding` (rows of a table) and `one_hot`. No backward code here:
the lookup is integer-array indexing."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..creation import where
from ..tensor import Tensor


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """`weight[input]` (rows of the table for integer ids); the rows at `padding_idx` get no
    gradient, as in PyTorch."""
    ids = np.asarray(input._data if isinstance(input, Tensor) else input)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: ids must be integers, got dtype {ids.dtype}")
    rows = weight[ids]
    if padding_idx is None:
        return rows
    padding = (ids == padding_idx % weight.shape[0])[..., None]
    return where(padding, weight.detach()[ids], rows)


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """Integer class ids (...) -> (..., num_classes) int64 rows with a 1 at each id (no
    gradient). num_classes=-1 takes the largest id + 1."""
    ids = np.asarray(tensor._data if isinstance(tensor, Tensor) else tensor)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"one_hot: needs integer class ids, got dtype {ids.dtype}")
    if num_classes == -1:
        num_classes = int(ids.max()) + 1 if ids.size else 0
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        raise ValueError(
            f"one_hot: class ids must be in [0, {num_classes}), got {ids.min()} to {ids.max()}"
        )
    return Tensor(np.eye(num_classes, dtype=np.int64)[ids])
