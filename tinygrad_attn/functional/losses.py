"""Elementwise losses between a prediction and a target of the same shape: `mse_loss`,
`l1_loss`, `smooth_l1_loss`, `binary_cross_entropy`, `binary_cross_entropy_with_logits` (one
check of input and target for all, `pred_and_target`). Written with Tensor ops, so each gradient is
the chain rule through them; no backward code here."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..creation import where
from ..errors import ShapeError
from ..tensor import Tensor
from ._checks import _check_float, _reduce, _tensor, legacy_reduction


def mse_loss(
    input: Tensor,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Any = None,
) -> Tensor:
    """Mean (or sum, or per element) of (input - target)^2, each term times `weight` (the
    input's shape) if given, as PyTorch's `F.mse_loss`. A target of another shape broadcasts,
    with PyTorch's warning."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("mse_loss", input, target, broadcast=True)
    diff = input - target
    return _weighted(diff * diff, weight, reduction, "mse_loss", input)


def pred_and_target(
    fn: str, pred: Any, target: Any, what: str = "input", broadcast: bool = False
) -> tuple:
    """(pred, target) as tensors for an elementwise loss (numbers or arrays become a constant
    in pred's dtype). Their shapes must be equal, or with `broadcast` (mse_loss, l1_loss,
    smooth_l1_loss, as PyTorch) broadcast, with PyTorch's warning; clear errors otherwise."""
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
        try:
            np.broadcast_shapes(pred.shape, target.shape)
        except ValueError:
            broadcast = False
        if not broadcast:
            raise ShapeError(
                f"{fn}: {what} has shape {pred.shape} but target has shape {target.shape}; "
                "they must be equal"
            )
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({pred.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )
    return pred, target


def _pair(fn: str, input: Any, target: Any, broadcast: bool = False) -> tuple[Tensor, Tensor]:
    """(input, target) as `pred_and_target` checks them, and the input a float tensor."""
    input, target = pred_and_target(fn, input, target, "input", broadcast)
    _check_float(input, fn)
    return input, target


_PER_ELEMENT_WEIGHT = ("mse_loss", "l1_loss", "huber_loss")  # a weight of the input's shape
_WEIGHTED_MEAN = ("mse_loss", "l1_loss")  # their "mean" divides by the weights' sum


def _weighted(loss: Tensor, weight: Any, reduction: str, fn: str, input: Tensor) -> Tensor:
    """`loss * weight` (a Tensor or an array, broadcast to the input's shape), reduced. As
    PyTorch: mse_loss, l1_loss and huber_loss take a weight per element, and the first two's
    "mean" is the weighted mean (divided by the weights' sum); huber_loss's and the binary
    losses' "mean" divides by the count."""
    if weight is None:
        return _reduce(loss, reduction, fn)
    weight = weight if isinstance(weight, Tensor) else Tensor(np.asarray(weight, input.dtype))
    if fn in _PER_ELEMENT_WEIGHT and weight.shape != input.shape:
        raise ShapeError(
            f"{fn}: weight has shape {weight.shape}, but weights and input must have the same "
            f"size {input.shape}"
        )
    loss = loss * weight
    if fn in _WEIGHTED_MEAN and reduction == "mean":
        return loss.sum() / weight.sum()
    return _reduce(loss, reduction, fn)


def l1_loss(
    input: Tensor,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Any = None,
) -> Tensor:
    """Mean (or sum, or per element) of |input - target|, each term times `weight` if given,
    as PyTorch's `F.l1_loss`."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("l1_loss", input, target, broadcast=True)
    return _weighted((input - target).abs(), weight, reduction, "l1_loss", input)


def smooth_l1_loss(
    input: Tensor,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target), as PyTorch;
    beta = 0 is the L1 loss."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("smooth_l1_loss", input, target, broadcast=True)
    if beta < 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0, got {beta}")
    size = (input - target).abs()
    if beta == 0:
        return _reduce(size, reduction, "smooth_l1_loss")
    near = size._data < beta
    loss = where(near, 0.5 * size * size / beta, size - 0.5 * beta)
    return _reduce(loss, reduction, "smooth_l1_loss")


def huber_loss(
    input: Tensor, target: Any, reduction: str = "mean", delta: float = 1.0, weight: Any = None
) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): delta times the smooth L1
    loss with beta = delta. A `weight` multiplies each element's loss before the reduction
    ("mean" divides by the count, as PyTorch's)."""
    input, target = _pair("huber_loss", input, target, broadcast=True)
    if delta <= 0:
        raise ValueError(f"huber_loss: delta must be positive, got {delta}")
    size = (input - target).abs()
    loss = where(size._data < delta, 0.5 * size * size, delta * (size - 0.5 * delta))
    return _weighted(loss, weight, reduction, "huber_loss", input)


def kl_div(
    input: Tensor,
    target: Any,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence of `target` from the distribution whose log-probabilities
    are `input`: target (log target - input), 0 where target is 0 (`log_target=True`: the target
    is given as log-probabilities). "batchmean" divides the sum by the batch size, which is the
    divergence; "mean" divides by the element count, as PyTorch's (with its warning)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("kl_div", input, target, broadcast=True)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        logs = where(target._data == 0, 1.0, target).log()  # (0 log 0 = 0, as PyTorch's xlogy)
        loss = target * logs - target * input
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    if reduction == "mean":
        warnings.warn(
            "reduction: 'mean' divides the total loss by both the batch size and the support "
            "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
            "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
            "major release.",
            UserWarning,
            stacklevel=2,
        )
    return _reduce(loss, reduction, "kl_div")


def binary_cross_entropy(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """-(t log p + (1 - t) log(1 - p)) for probabilities p = `input` in [0, 1], times `weight`
    if given; each log is clamped at -100, as in PyTorch (so p = 0 or 1 gives a finite loss and
    gradient 0 there)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("binary_cross_entropy", input, target)
    if input._data.size and not (0 <= input._data.min() and input._data.max() <= 1):
        raise ShapeError(
            "binary_cross_entropy: input must be probabilities in [0, 1], got values from "
            f"{input._data.min()} to {input._data.max()}; pass logits to "
            "binary_cross_entropy_with_logits instead (or apply sigmoid first)"
        )
    loss = -(target * _log_at_least_100(input) + (1 - target) * _log_at_least_100(1 - input))
    return _weighted(loss, weight, reduction, "binary_cross_entropy", input)


def _log_at_least_100(p: Tensor) -> Tensor:
    """log(p) clamped at -100 (PyTorch's rule), -100 at p = 0 with gradient 0 there (the log
    of the smallest normal number keeps 1 / p finite in the backward)."""
    tiny = np.finfo(p.dtype).tiny
    return where(p._data > 0, p.clip(tiny, None).log().clip(-100.0, None), -100.0)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Any,
    weight: Any = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Any = None,
) -> Tensor:
    """`binary_cross_entropy(sigmoid(input), target)` computed stably from the logits:
    (1 - t) x + (1 + (w - 1) t) softplus(-x), with `pos_weight` w (1 if not given); its
    gradient is sigmoid(x) - t when w = 1, also at x = 0 and for large |x|."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    input, target = _pair("binary_cross_entropy_with_logits", input, target)
    soft = (-input).softplus(1.0, np.inf)  # log(1 + exp(-x)), exact for every x
    if pos_weight is not None:
        w = pos_weight if isinstance(pos_weight, Tensor) else np.asarray(pos_weight, input.dtype)
        soft = soft * (1 + (w - 1) * target)
    loss = (1 - target) * input + soft
    return _weighted(loss, weight, reduction, "binary_cross_entropy_with_logits", input)
