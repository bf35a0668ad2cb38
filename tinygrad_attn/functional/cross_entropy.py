"""Classification losses over a class axis: `cross_entropy` (one fused node,
`ops.layers.CrossEntropy`; `cross_entropy_composed` its steps) and `nll_loss`, with one check of
their arguments. No backward code here."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ops.layers import CrossEntropy
from ..tensor import Tensor
from ._checks import _check_float, _reduce, _tensor


def cross_entropy(
    logits: Tensor,
    target: Any,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    """Negative log-likelihood of integer class targets under softmax(logits), in one node
    (`ops.layers.CrossEntropy`: log-softmax, pick, reduce).

    `logits` has the class axis LAST: `(N, C)` or `(B, T, C)` (unlike PyTorch's axis 1, so a
    transformer's output needs no transpose; PyTorch's `(N, C, d1, ...)` layout is refused with
    the `moveaxis` that fixes it); `target` holds integers in [0, C) with the logits' shape
    minus that axis: `(N,)` or `(B, T)`. As PyTorch: `reduction` "mean" (over the targets that
    are not `ignore_index`), "sum" or "none" (per-element losses shaped like `target`, 0 where
    ignored); `label_smoothing` s in [0, 1] mixes the one-hot target with the uniform
    distribution: loss = (1 - s) * nll + s * mean over classes of -log p. The targets are
    copied, so refilling a label buffer before `backward()` does not change the gradient.
    `cross_entropy_composed` computes the same from primitive ops.
    """
    logits, classes = _cross_entropy_args(
        "cross_entropy", logits, target, reduction, ignore_index, label_smoothing
    )
    return CrossEntropy.apply(
        logits,
        target=classes,
        ignore_index=int(ignore_index),
        label_smoothing=float(label_smoothing),
        reduction=reduction,
    )


def cross_entropy_composed(
    logits: Tensor,
    target: Any,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    """`cross_entropy` as LogSoftmax, Reshape, indexing, Neg and reduction nodes, for reading
    and drawing. Same arguments, same result (to rounding)."""
    logits, classes = _cross_entropy_args(
        "cross_entropy_composed", logits, target, reduction, ignore_index, label_smoothing
    )
    num_classes = logits.shape[-1]
    labels = classes.reshape(-1).copy()  # (N,)
    kept = labels != ignore_index  # (N,)
    labels[~kept] = 0
    log_probs = logits.log_softmax(axis=-1).reshape(-1, num_classes)  # (N, C)
    loss = -log_probs[np.arange(labels.size), labels]  # (N,)
    if label_smoothing:
        loss = (1 - label_smoothing) * loss - label_smoothing * log_probs.mean(axis=-1)  # (N,)
    if not kept.all():
        loss = loss * kept.astype(logits.dtype)  # (N,)
    if reduction == "mean":
        count = int(kept.sum())
        return loss.sum() / count if count else loss.sum() + np.nan  # 0/0, gradient 0
    return _reduce(loss.reshape(classes.shape), reduction, "cross_entropy_composed")


def _cross_entropy_args(
    fn: str, logits: Any, target: Any, reduction: Any, ignore_index: Any, smoothing: Any
) -> tuple:
    """Checked (logits, integer target array) for `cross_entropy`; clear errors otherwise."""
    logits = _tensor(logits, fn, "logits")
    _check_float(logits, fn, "logits")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if not isinstance(ignore_index, (int, np.integer)) or isinstance(ignore_index, bool):
        raise TypeError(f"{fn}: ignore_index must be an int, got {type(ignore_index).__name__}")
    if not isinstance(smoothing, (int, float, np.floating, np.integer)) or isinstance(
        smoothing, bool
    ):
        raise TypeError(
            f"{fn}: label_smoothing must be a float in [0, 1], got {type(smoothing).__name__}"
        )
    if not 0 <= smoothing <= 1:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {smoothing}")
    classes = np.asarray(target._data if isinstance(target, Tensor) else target)
    if classes.dtype.kind not in "iu":
        raise TypeError(
            f"{fn}: target must hold integer class indices, got dtype {classes.dtype}. "
            "Pass class numbers (e.g. np.array([2, 0, 1])), not one-hot, float or bool labels "
            "(class probabilities are not supported)."
        )
    if logits.ndim == 0 or logits.shape[:-1] != classes.shape:
        hint = ""
        if logits.ndim >= 2 and (logits.shape[0],) + logits.shape[2:] == classes.shape:
            hint = (
                " It looks like PyTorch's (N, C, d1, ...) layout: here the class axis is "
                "last, so pass logits.moveaxis(1, -1) (or build the logits class-last)."
            )
        raise ValueError(
            f"{fn}: logits of shape {logits.shape} need a target of shape "
            f"{logits.shape[:-1]} (the logits' shape without the class axis, which is last), "
            f"got {classes.shape}.{hint}"
        )
    num_classes = logits.shape[-1]
    bad = classes[((classes < 0) | (classes >= num_classes)) & (classes != ignore_index)]
    if bad.size:
        raise ValueError(
            f"{fn}: target value {int(bad.flat[0])} is not a class index: with "
            f"C={num_classes} classes (logits' last axis) targets must be in [0, {num_classes})"
            f" or equal ignore_index={int(ignore_index)}"
        )
    return logits, classes


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
