"""Classification losses over a class axis, as PyTorch's: `cross_entropy` and `nll_loss`, with
one check of their arguments (`_ClassArgs`).

The class axis is PyTorch's: 1 for `(N, C)` and `(N, C, d1, ...)` inputs, 0 for a `(C,)` input;
an `axis=` keyword names another (`axis=-1` for a transformer's `(B, T, V)` logits). Class-index
targets go through one fused node, `ops.layers.CrossEntropy` (after moving the class axis last);
class-probability targets, and per-class weights that require grad, through Tensor ops, so that
their gradients are the chain rule. `cross_entropy_composed` spells the class-index case with
primitive ops, for reading and drawing. No backward code here.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

from ..errors import ShapeError
from ..ops.layers import CrossEntropy
from ..tensor import Tensor
from ._checks import _check_float, _reduce, _tensor, legacy_reduction

_REDUCTIONS = ("mean", "sum", "none")


class _ClassArgs(NamedTuple):
    """What `cross_entropy` / `nll_loss` read from their arguments."""

    input: Tensor
    target: Any  # an int64 ndarray of class indices, or a float Tensor of probabilities
    probabilities: bool
    weight: Tensor | None
    axis: int  # the class axis, in [0, input.ndim)
    reduction: str
    ignore_index: int
    label_smoothing: float


def _class_args(
    fn: str,
    input: Any,
    target: Any,
    weight: Any,
    ignore_index: Any,
    reduction: Any,
    label_smoothing: Any,
    axis: Any,
) -> _ClassArgs:
    """Checked arguments of a class loss, in PyTorch's order: the input's dtype first, then the
    options, then the target against the input; each error names the fix."""
    input = _tensor(input, fn)
    _check_float(input, fn)
    if weight is not None and not isinstance(weight, (Tensor, np.ndarray)):
        hint = f"; pass reduction={weight!r} by keyword" if weight in _REDUCTIONS else ""
        raise TypeError(
            f"{fn}(): argument 'weight' (position 3) must be a Tensor of per-class weights or "
            f"None, not {type(weight).__name__}{hint} (PyTorch's signature: input, target, "
            "weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'"
            + (", label_smoothing=0.0)" if fn == "cross_entropy" else ")")
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}(): {reduction!r} is not a valid value for reduction")
    if not isinstance(ignore_index, (int, np.integer)) or isinstance(ignore_index, bool):
        raise TypeError(f"{fn}(): ignore_index must be an int, not {type(ignore_index).__name__}")
    if isinstance(label_smoothing, bool) or not isinstance(
        label_smoothing, (int, float, np.integer, np.floating)
    ):
        raise TypeError(
            f"{fn}(): label_smoothing must be a float, not {type(label_smoothing).__name__}"
        )
    if not 0 <= label_smoothing <= 1:
        raise ShapeError(
            f"{fn}(): label_smoothing must be between 0.0 and 1.0, got {label_smoothing}"
        )
    if input.ndim == 0:
        raise ShapeError(f"{fn}(): the input needs a class axis, got a 0-d tensor")
    if axis is None:
        axis = _class_last(fn, input, target) or (0 if input.ndim == 1 else 1)
    elif not -input.ndim <= axis < input.ndim:
        raise IndexError(f"{fn}(): axis {axis} is not an axis of the input's shape {input.shape}")
    axis = int(axis) % input.ndim
    classes = input.shape[axis]
    if weight is not None:
        weight = _tensor(weight, fn, "weight")
        if weight.shape != (classes,):
            raise ShapeError(
                f"{fn}(): weight tensor should be defined either for all {classes} classes or "
                f"no classes but got weight tensor of shape: {tuple(weight.shape)}"
            )
        if weight.dtype != input.dtype:
            weight = weight.to(input.dtype)
    target, probabilities = _target(fn, input, target, axis)
    if probabilities and ignore_index != -100:
        raise ShapeError(
            f"{fn}(): ignore_index is not supported for class-probability (float) targets; "
            "give the ignored positions zero probability, or pass class indices"
        )
    if not probabilities:
        bad = target[((target < 0) | (target >= classes)) & (target != ignore_index)]
        if bad.size:
            raise IndexError(
                f"{fn}(): Target {int(bad.flat[0])} is out of bounds: with {classes} classes "
                f"(the input's axis {axis}) targets must be in [0, {classes}) or equal "
                f"ignore_index={int(ignore_index)}"
            )
    return _ClassArgs(
        input,
        target,
        probabilities,
        weight,
        axis,
        reduction,
        int(ignore_index),
        float(label_smoothing),
    )


class ClassLastWarning(UserWarning):
    """(B, T, C) logits read with the classes last (see `_class_last`)."""


def _class_last(fn: str, input: Tensor, target: Any) -> int | None:
    """-1 for `(B, T, C)` logits with a `(B, T)` target, a call PyTorch refuses (its class axis
    is 1, so it wants `(B, C)`): with T != C the call means one thing only, and it is read with
    the classes last, as code written for this package before it adopted PyTorch's axis does.
    A warning says so, and that the same call with T == C means PyTorch's axis 1."""
    if input.ndim < 3:
        return None
    shape = tuple(np.shape(target._data if isinstance(target, Tensor) else target))
    if shape != input.shape[:-1] or shape == input.shape[:1] + input.shape[2:]:
        return None
    warnings.warn(
        f"{fn}(): target {shape} fits the input {tuple(input.shape)} with the classes LAST, "
        "which PyTorch refuses (its class axis is 1): read so here. Say it with axis=-1 (or "
        "flatten both: input.view(-1, C), target.view(-1), as PyTorch code does); note that "
        "with T == C the same call means PyTorch's class axis 1.",
        ClassLastWarning,
        stacklevel=4,
    )
    return input.ndim - 1


def _target(fn: str, input: Tensor, target: Any, axis: int) -> tuple[Any, bool]:
    """(int64 class indices, False) or (float probability Tensor, True), shapes checked."""
    if isinstance(target, Tensor) and target.dtype.kind == "f":
        probabilities = target
    else:
        array = np.asarray(target._data if isinstance(target, Tensor) else target)
        if array.dtype.kind == "f":
            probabilities = Tensor(array)
        elif array.dtype.kind in "iu":
            probabilities = None
        else:
            raise TypeError(
                f"{fn}(): target must hold class indices (integers) or class probabilities "
                f"(floats, the input's shape), got dtype {array.dtype}"
            )
    if probabilities is not None:
        if probabilities.shape != input.shape:
            raise ShapeError(
                f"{fn}(): a float target is read as class probabilities, which must have the "
                f"input's shape {input.shape}, got {probabilities.shape}; for class indices "
                "pass integers (target.long())"
            )
        return probabilities, True
    expected = input.shape[:axis] + input.shape[axis + 1 :]
    if array.shape != expected:
        raise ShapeError(
            f"{fn}(): expected target size {expected} (the input's shape {input.shape} without "
            f"its class axis {axis}), got {array.shape}. For classes on another axis, name it: "
            "axis=-1 for (B, T, C) logits."
        )
    return array.astype(np.int64, copy=False), False


def cross_entropy(
    input: Tensor,
    target: Any,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
    *,
    axis: int | None = None,
) -> Tensor:
    """The cross-entropy between softmax(input) over the class axis and `target`, as PyTorch's
    `F.cross_entropy`.

    `input` is `(C,)`, `(N, C)` or `(N, C, d1, ...)` (class axis 1; `axis=` names another).
    `target` is either class indices (integers in [0, C), the input's shape without the class
    axis; `ignore_index` marks positions that count for nothing) or class probabilities (floats
    of the input's shape). `weight` (C,) weighs each class; `label_smoothing` s mixes the
    target with the uniform distribution over classes. `reduction`: "mean" (class indices:
    divided by the summed weights of the counted targets; probabilities: by the number of
    positions), "sum" or "none" (a loss per position). Class indices run as one fused node
    (`ops.layers.CrossEntropy`); `cross_entropy_composed` computes the same from primitive ops.
    """
    reduction = legacy_reduction(size_average, reduce, reduction)
    args = _class_args(
        "cross_entropy", input, target, weight, ignore_index, reduction, label_smoothing, axis
    )
    if args.probabilities:
        return _soft_cross_entropy(args)
    if args.weight is not None and args.weight.requires_grad:
        return _composed(args)  # (the fused node takes the weights as constants)
    logits = args.input
    if args.axis != logits.ndim - 1:
        logits = logits.moveaxis(args.axis, -1)  # (..., C): the fused node's layout
    return CrossEntropy.apply(
        logits,
        target=args.target,
        weight=None if args.weight is None else args.weight.numpy(),
        ignore_index=args.ignore_index,
        label_smoothing=args.label_smoothing,
        reduction=args.reduction,
    )


def cross_entropy_composed(
    input: Tensor,
    target: Any,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
    *,
    axis: int | None = None,
) -> Tensor:
    """`cross_entropy` as LogSoftmax, indexing, Mul, Neg and reduction nodes, for reading and
    drawing. Same arguments, same result (to rounding)."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    args = _class_args(
        "cross_entropy_composed",
        input,
        target,
        weight,
        ignore_index,
        reduction,
        label_smoothing,
        axis,
    )
    return _soft_cross_entropy(args) if args.probabilities else _composed(args)


def _class_weights(args: _ClassArgs) -> Tensor:
    classes = args.input.shape[args.axis]
    return args.weight if args.weight is not None else Tensor(np.ones(classes, args.input.dtype))


def _composed(args: _ClassArgs) -> Tensor:
    """The class-index loss from primitive ops (weights may require grad)."""
    classes = args.input.shape[args.axis]
    log_probs = args.input.log_softmax(dim=args.axis).moveaxis(args.axis, -1)  # (..., C)
    rows = log_probs.reshape(-1, classes)  # (N, C)
    labels = args.target.reshape(-1)  # (N,)
    kept = labels != args.ignore_index  # (N,)
    safe = np.where(kept, labels, 0)  # (N,), any class where ignored
    weights = _class_weights(args)  # (C,)
    row_weights = weights[safe] * kept.astype(args.input.dtype)  # (N,), 0 where ignored
    loss = -rows[np.arange(labels.size), safe] * row_weights  # (N,)
    s = args.label_smoothing
    if s:
        smooth = -(rows * weights).sum(dim=-1) * kept.astype(args.input.dtype)  # (N,)
        loss = (1 - s) * loss + (s / classes) * smooth
    if args.reduction == "mean":
        total = row_weights.sum()
        if total.item() == 0:  # nothing counted: 0/0, whose gradient is 0 (PyTorch: NaN, 0)
            return loss.sum() + np.nan
        return loss.sum() / total
    return _reduce(loss.reshape(args.target.shape), args.reduction, "cross_entropy")


def _soft_cross_entropy(args: _ClassArgs) -> Tensor:
    """The loss of class-probability targets: -sum over classes of w_c t_c log p_c per
    position (t smoothed first); "mean" divides by the number of positions."""
    classes = args.input.shape[args.axis]
    target = args.target
    if args.label_smoothing:
        target = target * (1 - args.label_smoothing) + args.label_smoothing / classes
    log_probs = args.input.log_softmax(dim=args.axis)  # input's shape
    terms = log_probs * target
    if args.weight is not None:
        shape = [1] * args.input.ndim
        shape[args.axis] = classes
        terms = terms * args.weight.reshape(shape)  # (1, C, 1, ...)
    loss = -terms.sum(dim=args.axis)  # the input's shape without the class axis
    if args.reduction == "mean":
        return loss.sum() / (args.input.numel() // classes if classes else 0)
    return _reduce(loss, args.reduction, "cross_entropy")


def nll_loss(
    input: Tensor,
    target: Any,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    *,
    axis: int | None = None,
) -> Tensor:
    """The negative log-likelihood of class indices given log-probabilities `input` (e.g.
    `F.log_softmax(logits, 1)`), as PyTorch's `F.nll_loss`: `-input[n, target[n], ...]`
    weighted per class by `weight` (C,); class axis 1 (0 for a `(C,)` input; `axis=` names
    another); "mean" divides by the summed weights of the targets that are not
    `ignore_index`."""
    reduction = legacy_reduction(size_average, reduce, reduction)
    args = _class_args("nll_loss", input, target, weight, ignore_index, reduction, 0.0, axis)
    if args.probabilities:
        raise TypeError(
            "nll_loss(): target must hold class indices (integers), got floats; for class "
            "probabilities use F.cross_entropy"
        )
    classes = args.input.shape[args.axis]
    rows = args.input.moveaxis(args.axis, -1).reshape(-1, classes)  # (N, C)
    labels = args.target.reshape(-1)  # (N,)
    kept = labels != args.ignore_index
    safe = np.where(kept, labels, 0)
    row_weights = _class_weights(args)[safe] * kept.astype(args.input.dtype)  # (N,)
    loss = -rows[np.arange(labels.size), safe] * row_weights  # (N,)
    if args.reduction == "mean":
        total = row_weights.sum()
        return loss.sum() / total if total.item() else loss.sum() + np.nan  # nothing kept: 0/0
    return _reduce(loss.reshape(args.target.shape), args.reduction, "nll_loss")
