"""Integer ids to rows: `embedding` (rows of a table, as PyTorch's `F.embedding`) and
`one_hot`. No backward code here: the lookup is integer-array indexing, whose gradient adds up
the rows of repeated ids; the padding row and `scale_grad_by_freq` are arranged with detached
copies, so no op of their own is needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..creation import where
from ..errors import DTypeError, ShapeError
from ..state import no_grad
from ..tensor import Tensor
from ._checks import _tensor


def token_ids(input: Any, fn: str) -> np.ndarray:
    """Integer ids as an int64 array (any integer dtype is taken: uint8 ids index as int64,
    whose gradient sums cannot overflow); a DTypeError for anything else, as PyTorch."""
    ids = np.asarray(input._data if isinstance(input, Tensor) else input)
    if ids.dtype.kind not in "iu":
        raise DTypeError(
            f"{fn}: indices must be integers (token ids), got dtype {ids.dtype}; pass ids, e.g. "
            "ta.tensor([[3, 1, 4]]), or convert them (ids.long())"
        )
    return ids.astype(np.int64, copy=False)


def padding_row(padding_idx: Any, rows: int, fn: str) -> int | None:
    """`padding_idx` as a row of a table of `rows` rows (negative counts from the end)."""
    if padding_idx is None:
        return None
    if not -rows <= padding_idx < rows:
        raise ValueError(
            f"{fn}: padding_idx={padding_idx} must be within num_embeddings={rows} (in "
            f"[{-rows}, {rows}))"
        )
    return int(padding_idx) % rows


def embedding(
    input: Any,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """`weight[input]`: the rows of the table `weight` (num_embeddings, D) for integer ids
    `(...)` -> `(..., D)`, as PyTorch's `F.embedding`. An id outside [0, num_embeddings) is
    PyTorch's IndexError (a negative id does not count from the end). The row of
    `padding_idx` gets no gradient; `max_norm` rescales, in place, each looked-up row whose
    `norm_type`-norm is larger to that norm; `scale_grad_by_freq` divides each row's gradient
    by how often its id occurs in `input`. Sparse gradients are not supported."""
    ids = token_ids(input, "embedding")
    weight = _tensor(weight, "embedding", "weight")
    if weight.ndim != 2:
        raise ShapeError(
            f"embedding: weight must be 2-D (num_embeddings, embedding_dim), got shape "
            f"{weight.shape}"
        )
    rows = weight.shape[0]
    bad = ids[(ids < 0) | (ids >= rows)]
    if bad.size:
        raise IndexError(
            f"embedding: index {int(bad.flat[0])} out of range in self: the table has {rows} "
            f"rows, so ids must be in [0, {rows - 1}]"
        )
    padding = padding_row(padding_idx, rows, "embedding")
    if sparse:
        raise NotImplementedError(
            "embedding: sparse=True (sparse gradients) is not supported; pass sparse=False, "
            "which gives the same gradient as a dense tensor"
        )
    if max_norm is not None:
        _renorm_rows(weight, np.unique(ids), float(max_norm), float(norm_type))
    out = weight[ids]  # (..., D)
    if scale_grad_by_freq:
        _, where_, counts = np.unique(ids, return_inverse=True, return_counts=True)
        scale = (1.0 / counts[where_.reshape(ids.shape)]).astype(weight.dtype)[..., None]
        held = out.detach()
        out = held + (out - held) * scale  # the same values; each row's gradient / its count
    if padding is None:
        return out
    at_padding = (ids == padding)[..., None]  # (..., 1)
    return where(at_padding, weight.detach()[ids], out)


def _renorm_rows(weight: Tensor, ids: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's max_norm: each listed row of `weight` whose norm exceeds `max_norm` is scaled
    to it (1e-7 added to the norm, as PyTorch), in place and outside the graph."""
    rows = weight.numpy()[ids]  # (K, D)
    norms = np.linalg.norm(rows, ord=norm_type, axis=1)  # (K,)
    large = norms > max_norm
    if large.any():
        scale = (max_norm / (norms[large] + 1e-7)).astype(weight.dtype)[:, None]
        with no_grad():
            weight[ids[large]] = rows[large] * scale


def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """Integer class ids (...) -> (..., num_classes) int64 rows with a 1 at each id (no
    gradient). num_classes=-1 takes the largest id + 1."""
    ids = np.asarray(tensor._data if isinstance(tensor, Tensor) else tensor)
    if ids.dtype.kind not in "iu":
        raise DTypeError(f"one_hot: needs integer class ids, got dtype {ids.dtype}")
    if num_classes == -1:
        num_classes = int(ids.max()) + 1 if ids.size else 0
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        raise ShapeError(
            f"one_hot: class ids must be in [0, {num_classes}), got {ids.min()} to {ids.max()}"
        )
    return Tensor(np.eye(num_classes, dtype=np.int64)[ids])
