"""PyTorch's other functional forms, written with Tensor ops (so each gradient is the chain rule
through the ops it calls, and every step shows up in a graph): the losses `mse_loss`,
`nll_loss`, `l1_loss`, `smooth_l1_loss`, `binary_cross_entropy`,
`binary_cross_entropy_with_logits` (one check of input and target, `pred_and_target`, for all
but `nll_loss`), and `logsumexp`, `normalize`, `cosine_similarity`, `pad`, `one_hot`,
`embedding`.

`functional.py` re-exports them, so they are `F.nll_loss` and so on. As there, a class axis is
LAST (`(N, C)` or `(B, T, C)`), and this module has no backward code of its own.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .creation import cat, full, where
from .functional import _check_float, _cross_entropy_args, _reduce, _tensor
from .tensor import Tensor

__all__ = [
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cosine_similarity",
    "embedding",
    "l1_loss",
    "logsumexp",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "smooth_l1_loss",
]


def mse_loss(pred: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Mean (or sum, or per element) of (pred - target)^2; the shapes must be equal."""
    pred, target = pred_and_target("mse_loss", pred, target)
    diff = pred - target
    return _reduce(diff * diff, reduction, "mse_loss")


def pred_and_target(fn: str, pred: Any, target: Any, what: str = "pred") -> tuple:
    """(pred, target) as tensors of one shape (numbers or arrays become a constant in pred's
    dtype) for an elementwise loss; clear errors otherwise."""
    pred = _tensor(pred, fn, what)
    if not isinstance(target, Tensor):
        try:
            array = np.asarray(target)
        except ValueError:
            array = np.empty(0, dtype=object)  # a ragged list: reported below
        if array.dtype.kind not in "fiub":
            raise TypeError(
                f"{fn}: target must be a Tensor, an ndarray or (a list of) numbers, got "
                f"{type(target).__name__} (NumPy reads it as dtype {array.dtype})"
            )
        target = Tensor(array, dtype=pred.dtype)
    if pred.shape != target.shape:
        raise ValueError(
            f"{fn}: {what} has shape {pred.shape} but target has shape {target.shape}; they "
            "must be equal (broadcasting here usually hides a bug)"
        )
    return pred, target


def _pair(fn: str, input: Any, target: Any) -> tuple[Tensor, Tensor]:
    """(input, target) as `mse_loss` checks them, and the input a float tensor."""
    input, target = pred_and_target(fn, input, target, "input")
    _check_float(input, fn)
    return input, target


def _weighted(loss: Tensor, weight: Any, reduction: str, fn: str) -> Tensor:
    if weight is not None:
        loss = loss * (weight if isinstance(weight, Tensor) else np.asarray(weight, loss.dtype))
    return _reduce(loss, reduction, fn)


def nll_loss(
    input: Tensor,
    target: Any,
    weight: Any = None,
    ignore_index: int = -100,
    reduction: str = "mean",
) -> Tensor:
    """The negative log-likelihood of integer class targets, given log-probabilities `input`
    (class axis last, e.g. `F.log_softmax(logits, -1)`): `-input[..., target]`, weighted per
    class by `weight` (C,); "mean" divides by the summed weights of the targets that are not
    `ignore_index`, as PyTorch does."""
    input, classes = _cross_entropy_args("nll_loss", input, target, reduction, ignore_index, 0)
    kept = classes != ignore_index
    picked = input.gather(-1, np.where(kept, classes, 0)[..., None]).squeeze(-1)  # target's shape
    scale = kept.astype(input.dtype)
    if weight is not None:
        w = np.asarray(weight._data if isinstance(weight, Tensor) else weight, input.dtype)
        if w.shape != (input.shape[-1],):
            raise ValueError(
                f"nll_loss: weight must have one entry per class, shape ({input.shape[-1]},), "
                f"got {w.shape}"
            )
        scale = scale * w[np.where(kept, classes, 0)]
    loss = -picked * scale
    if reduction == "mean":
        total = scale.sum()
        return loss.sum() / total if total else loss.sum() + np.nan  # nothing kept: 0/0
    return _reduce(loss, reduction, "nll_loss")


def l1_loss(input: Tensor, target: Any, reduction: str = "mean") -> Tensor:
    """Mean (or sum, or per element) of |input - target|; the shapes must be equal."""
    input, target = _pair("l1_loss", input, target)
    return _reduce((input - target).abs(), reduction, "l1_loss")


def smooth_l1_loss(input: Tensor, target: Any, reduction: str = "mean", beta: float = 1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target), as PyTorch;
    beta = 0 is the L1 loss."""
    input, target = _pair("smooth_l1_loss", input, target)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    size = (input - target).abs()
    if beta == 0:
        return _reduce(size, reduction, "smooth_l1_loss")
    near = size._data < beta
    loss = where(near, 0.5 * size * size / beta, size - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def binary_cross_entropy(
    input: Tensor, target: Any, weight: Any = None, reduction: str = "mean"
) -> Tensor:
    """-(t log p + (1 - t) log(1 - p)) for probabilities p = `input` in [0, 1]; each log is
    clamped at -100, as in PyTorch (so p = 0 or 1 gives a finite loss and gradient 0 there)."""
    input, target = _pair("binary_cross_entropy", input, target)
    if input._data.size and not (0 <= input._data.min() and input._data.max() <= 1):
        raise ValueError(
            "binary_cross_entropy: input must be probabilities in [0, 1], got values from "
            f"{input._data.min()} to {input._data.max()}; pass logits to "
            "binary_cross_entropy_with_logits instead (or apply sigmoid first)"
        )
    loss = -(target * _log_at_least_100(input) + (1 - target) * _log_at_least_100(1 - input))
    return _weighted(loss, weight, reduction, "binary_cross_entropy")


def _log_at_least_100(p: Tensor) -> Tensor:
    """log(p) clamped at -100 (PyTorch's rule), -100 at p = 0 with gradient 0 there (the log
    of the smallest normal number keeps 1 / p finite in the backward)."""
    tiny = np.finfo(p.dtype).tiny
    return where(p._data > 0, p.clip(tiny, None).log().clip(-100.0, None), -100.0)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Any,
    weight: Any = None,
    reduction: str = "mean",
    pos_weight: Any = None,
) -> Tensor:
    """`binary_cross_entropy(sigmoid(input), target)` computed stably from the logits:
    (1 - t) x + (1 + (w - 1) t) softplus(-x), with `pos_weight` w (1 if not given); its
    gradient is sigmoid(x) - t when w = 1, also at x = 0 and for large |x|."""
    input, target = _pair("binary_cross_entropy_with_logits", input, target)
    soft = (-input).softplus(1.0, np.inf)  # log(1 + exp(-x)), exact for every x
    if pos_weight is not None:
        w = pos_weight if isinstance(pos_weight, Tensor) else np.asarray(pos_weight, input.dtype)
        soft = soft * (1 + (w - 1) * target)
    loss = (1 - target) * input + soft
    return _weighted(loss, weight, reduction, "binary_cross_entropy_with_logits")


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, with the maximum taken out first so that nothing
    overflows; its gradient is softmax(x) over `dim`."""
    input = _tensor(input, "logsumexp")
    if input._data.size == 0:  # (NumPy's max of nothing fails; the sum of no exp is 0)
        peak = np.zeros(np.sum(input._data, axis=dim, keepdims=True).shape, input.dtype)
    else:
        peak = input._data.max(axis=dim, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)  # a row of -inf: its sum is 0, its log -inf
    total = (input - peak).exp().sum(dim=dim, keepdim=True).log() + peak
    return total if keepdim else total.squeeze(dim)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """input / max(||input||_p over `dim`, eps): unit vectors along `dim` (PyTorch's default
    dim is 1)."""
    input = _tensor(input, "normalize")
    return input / input.norm(p, dim=dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along `dim` (the shapes broadcast)."""
    x1, x2 = _tensor(x1, "cosine_similarity", "x1"), _tensor(x2, "cosine_similarity", "x2")
    size1 = x1.norm(dim=dim).clamp(min=eps)
    size2 = x2.norm(dim=dim).clamp(min=eps)
    return (x1 * x2).sum(dim=dim) / (size1 * size2)


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad (or, with negative amounts, crop) the last axes by `value`: `pad` is (before, after)
    for the last axis, then for the one before it, and so on, as in PyTorch."""
    input = _tensor(input, "pad")
    amounts = tuple(int(n) for n in pad)
    if len(amounts) % 2 or len(amounts) // 2 > input.ndim:
        raise ValueError(
            f"pad: {pad} must hold a (before, after) pair per padded axis, at most "
            f"{input.ndim} pairs for shape {input.shape}"
        )
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got mode={mode!r}")
    out = input
    for i in range(len(amounts) // 2):
        axis = input.ndim - 1 - i
        before, after = amounts[2 * i], amounts[2 * i + 1]
        length = out.shape[axis]
        out = out[(slice(None),) * axis + (slice(max(-before, 0), length - max(-after, 0)),)]
        parts = [out]
        for side, n in ((0, before), (1, after)):
            if n > 0:
                shape = out.shape[:axis] + (n,) + out.shape[axis + 1 :]
                parts.insert(side * len(parts), full(shape, value, dtype=out.dtype))
        out = cat(parts, dim=axis) if len(parts) > 1 else out
    return out


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
