"""Functional composites: activations, losses, normalisation, dropout and attention.

Most functions here are written with Tensor ops, so their gradient is the chain rule through the
ops they call and every step shows up in a graph. Where the maths is one step, the function
validates its arguments and hands the work to one fused node with a hand-derived backward:
`linear`, `layer_norm`, `gelu`, `cross_entropy` (`ops.layers`) and
`scaled_dot_product_attention` (`ops.attention`). Each has a `*_composed` twin with the same
arguments and result, built from primitive ops, for reading and drawing every step
(`linear_composed`, `layer_norm_composed`, `gelu_composed`, `cross_entropy_composed`,
`attention_composed`). This module has no backward code of its own.

It must not subclass `Function`, touch `.grad`, or reach into an op's internals.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .ops.attention import ScaledDotProductAttention, causal_mask
from .ops.layers import GELU, CrossEntropy, LayerNorm, Linear
from .state import get_rng
from .tensor import Tensor

__all__ = [
    "attention_composed",
    "attention_weights",
    "cross_entropy",
    "cross_entropy_composed",
    "dropout",
    "gelu",
    "gelu_composed",
    "layer_norm",
    "layer_norm_composed",
    "linear",
    "linear_composed",
    "log_softmax",
    "relu",
    "scaled_dot_product_attention",
    "sigmoid",
    "softmax",
    "tanh",
    "elu",
    "hardtanh",
    "leaky_relu",
    "silu",
    "softplus",
]


def _tensor(x: Any, fn: str, what: str = "input") -> Tensor:
    """`x` if it is a Tensor, a constant Tensor for an ndarray; otherwise a TypeError."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return Tensor(x)
    raise TypeError(
        f"{fn}: {what} must be a Tensor (or an np.ndarray), got {type(x).__name__}; wrap it "
        f"first: ta.tensor({x!r})"
    )


def _reduce(loss: Tensor, reduction: str, fn: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


# ------------------------------------------------------------------------------ activations
def softmax(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis` (or `dim`; -1 by default); the max is subtracted
    first, for stability."""
    return _tensor(x, "softmax").softmax(axis, dim=dim)


def log_softmax(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """x - log(sum(exp(x))) along `axis` (or `dim`; -1 by default); use it rather than
    log(softmax(x)) for stability."""
    return _tensor(x, "log_softmax").log_softmax(axis, dim=dim)


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0). `inplace=True` (PyTorch's flag, here and below) computes it out of place too:
    the result is what is returned, and `x` keeps its values."""
    return _tensor(x, "relu").relu()


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return _tensor(x, "sigmoid").sigmoid()


def tanh(x: Tensor) -> Tensor:
    """tanh(x)."""
    return _tensor(x, "tanh").tanh()


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, as PyTorch's `F.gelu`, in one node (`ops.layers.GELU`).

    `approximate="none"`: x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), the exact form.
    `approximate="tanh"`: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's form.
    `gelu_composed` computes the same from primitive ops.
    """
    x = _tensor(x, "gelu")
    _check_approximate(approximate)
    _check_float(x, "gelu")
    return GELU.apply(x, approximate=approximate)


def gelu_composed(x: Tensor, approximate: str = "none") -> Tensor:
    """`gelu` written with primitive ops (Mul, Add, Erf or Tanh ...), for reading and drawing."""
    x = _tensor(x, "gelu_composed")
    _check_approximate(approximate)
    if approximate == "none":
        return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
    return 0.5 * x * (1 + inner.tanh())


def _check_approximate(approximate: Any) -> None:
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def _check_float(x: Tensor, fn: str, what: str = "input") -> None:
    if x.dtype.kind != "f":
        raise TypeError(
            f"{fn}: {what} must be a float tensor, got dtype {x.dtype}; convert it first "
            "(e.g. Tensor(x.numpy(), dtype=np.float32))"
        )


# -------------------------------------------------------------------------------- linear
def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight^T + bias in one node (`ops.layers.Linear`, like PyTorch's addmm), as
    PyTorch's `F.linear`: weight `(out, in)`, bias `(out,)` or None, input `(..., in)` ->
    `(..., out)`; the leading axes are folded into one matrix product, forward and backward.
    `linear_composed` computes the same from primitive ops."""
    x, weight, bias = _linear_args("linear", x, weight, bias)
    return Linear.apply(x, weight) if bias is None else Linear.apply(x, weight, bias)


def linear_composed(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`linear` as MatMul, Transpose and Add nodes, for reading and drawing."""
    x, weight, bias = _linear_args("linear_composed", x, weight, bias)
    out = x @ weight.T  # (..., out)
    return out if bias is None else out + bias


def _linear_args(fn: str, x: Any, weight: Any, bias: Any) -> tuple:
    x = _tensor(x, fn)
    weight = _tensor(weight, fn, "weight")
    bias = None if bias is None else _tensor(bias, fn, "bias")
    if weight.ndim != 2:
        raise ValueError(
            f"{fn}: weight must be 2-D (out_features, in_features), got shape {weight.shape}"
        )
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"{fn}: input of shape {x.shape} does not fit weight {weight.shape}: the input's "
            f"last axis must be in_features={weight.shape[1]} (weight is (out, in), as PyTorch)"
        )
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(
            f"{fn}: bias has shape {bias.shape}, expected ({weight.shape[0]},) "
            "(out_features, the weight's first axis)"
        )
    return x, weight, bias


# ----------------------------------------------------------------------------------- losses
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


# ---------------------------------------------------------------------- normalisation, noise
def layer_norm(
    x: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the trailing `normalized_shape` axes, then
    `* weight + bias` if given (biased variance, as PyTorch), in one node
    (`ops.layers.LayerNorm`). `layer_norm_composed` computes the same from primitive ops."""
    x, shape, weight, bias = _layer_norm_args("layer_norm", x, normalized_shape, weight, bias, eps)
    affine = tuple(t for t in (weight, bias) if t is not None)
    return LayerNorm.apply(
        x, *affine, dims=len(shape), eps=float(eps), has_weight=weight is not None
    )


def layer_norm_composed(
    x: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """`layer_norm` as Mean, Var, Sub, Add, Sqrt, Div (Mul, Add) nodes, for reading and
    drawing. Same arguments, same result (to rounding)."""
    x, shape, weight, bias = _layer_norm_args(
        "layer_norm_composed", x, normalized_shape, weight, bias, eps
    )
    axes = tuple(range(-len(shape), 0))
    mean = x.mean(axis=axes, keepdims=True)  # (..., 1, ..., 1)
    var = x.var(dim=axes, keepdim=True, correction=0)  # (..., 1, ..., 1)
    out = (x - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def normalized_shape_tuple(fn: str, normalized_shape: Any) -> tuple:
    """`normalized_shape` (an int, NumPy integer or a sequence of them) as a tuple of ints."""
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        return (int(normalized_shape),)
    try:
        shape = tuple(normalized_shape)
    except TypeError:
        shape = None
    if shape is None or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape
    ):
        raise TypeError(
            f"{fn}: normalized_shape must be an int or a tuple of ints (the trailing axes to "
            f"normalise), got {normalized_shape!r}"
        )
    return tuple(int(n) for n in shape)


def _layer_norm_args(
    fn: str, x: Any, normalized_shape: Any, weight: Any, bias: Any, eps: Any
) -> tuple:
    x = _tensor(x, fn)
    _check_float(x, fn)
    shape = normalized_shape_tuple(fn, normalized_shape)
    if not shape or len(shape) > x.ndim or x.shape[x.ndim - len(shape) :] != shape:
        raise ValueError(
            f"{fn}: normalized_shape {shape} must be the trailing axes of the input, "
            f"whose shape is {x.shape}"
        )
    params = []
    for label, param in (("weight", weight), ("bias", bias)):
        if param is not None and not isinstance(param, (Tensor, np.ndarray)):
            raise TypeError(
                f"{fn}: {label} must be a Tensor (or an np.ndarray) of shape {shape}, got "
                f"{type(param).__name__}; wrap it: Tensor(values, requires_grad=True)"
            )
        param = None if param is None else _tensor(param, fn, label)
        if param is not None and tuple(param.shape) != shape:
            raise ValueError(
                f"{fn}: {label} has shape {tuple(param.shape)}, expected normalized_shape {shape}"
            )
        params.append(param)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)):
        raise TypeError(f"{fn}: eps must be a float, got {type(eps).__name__}")
    return (x, shape, *params)


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p), so the expected
    value is unchanged; the identity when `training` is False or p == 0, zeros when p == 1.
    The mask comes from the global generator (`ta.manual_seed`)."""
    x = _tensor(x, "dropout")
    if x.dtype.kind != "f":
        raise TypeError(
            f"dropout: needs a float tensor, got dtype {x.dtype} (scaling by 1/(1-p) needs "
            "fractions); convert it first, e.g. Tensor(x._data, dtype=np.float32)"
        )
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"dropout: p must be a number in [0, 1], got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:  # everything dropped (as PyTorch: x * 0, so inf gives nan)
        return x * np.zeros((), dtype=x.dtype)
    keep = get_rng().random(x.shape) >= p  # (x.shape), True = kept
    return x * (keep.astype(x.dtype) / x.dtype.type(1 - p))


# -------------------------------------------------------------------------------- attention
def _attention_args(
    fn: str, query: Any, key: Any, value: Any, attn_mask: Any, is_causal: bool
) -> tuple:
    """Check the arguments of an attention call; returns (query, key, value, mask) as Tensors
    (value and mask may be None). Each message names the shapes and what to change."""
    query = _tensor(query, fn, "query")
    key = _tensor(key, fn, "key")
    value = None if value is None else _tensor(value, fn, "value")
    named = [("query", query), ("key", key)] + ([("value", value)] if value is not None else [])
    for label, t in named:
        if t.ndim < 2:
            raise ValueError(
                f"{fn}: {label} must have at least 2 axes (..., positions, width), got shape "
                f"{t.shape}; add a positions axis with .unsqueeze(0)"
            )
        if t.dtype.kind != "f":
            raise TypeError(f"{fn}: {label} must be a float tensor, got dtype {t.dtype}")
        if t.dtype != query.dtype:
            raise TypeError(
                f"{fn}: query, key and value must share one dtype, got query {query.dtype} and "
                f"{label} {t.dtype}; convert them first"
            )
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"{fn}: query {query.shape} and key {key.shape} must have the same width E (last "
            f"axis), got {query.shape[-1]} and {key.shape[-1]}; project both to one width "
            "(e.g. with nn.Linear) first"
        )
    if value is not None and key.shape[-2] != value.shape[-2]:
        raise ValueError(
            f"{fn}: key {key.shape} and value {value.shape} must have the same number of "
            f"positions S (second-to-last axis), got {key.shape[-2]} and {value.shape[-2]}; "
            "each key needs the value it stands for"
        )
    try:
        np.broadcast_shapes(*(t.shape[:-2] for _, t in named))
    except ValueError:
        listed = ", ".join(f"{label} {t.shape}" for label, t in named)
        raise ValueError(
            f"{fn}: the batch axes (all but the last two) of {listed} do not broadcast; they "
            "must be equal or 1 (e.g. (B, H, L, E) with (B, 1, S, E))"
        ) from None
    if attn_mask is None:
        return query, key, value, None
    if is_causal:
        raise ValueError(
            f"{fn}: pass either attn_mask or is_causal=True, not both. To combine them, give "
            "one bool mask: causal & yours, with causal = np.tri(L, S, dtype=bool)"
        )
    mask = attn_mask if isinstance(attn_mask, Tensor) else Tensor(np.asarray(attn_mask))
    weights_shape = np.broadcast_shapes(query.shape[:-2], key.shape[:-2]) + (
        query.shape[-2],
        key.shape[-2],
    )
    if mask.dtype.kind == "f" and mask.dtype != query.dtype:
        if mask.requires_grad:
            raise TypeError(
                f"{fn}: a float attn_mask that requires grad must have the query's dtype "
                f"{query.dtype}, got {mask.dtype}"
            )
        mask = Tensor(mask._data, dtype=query.dtype)
    elif mask.dtype.kind not in "fb":
        raise TypeError(
            f"{fn}: attn_mask must be bool (True = may attend) or float (added to the scores), "
            f"got dtype {mask.dtype}"
        )
    try:
        fits = np.broadcast_shapes(mask.shape, weights_shape) == weights_shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{fn}: attn_mask of shape {mask.shape} must broadcast to the attention weights' "
            f"shape (..., L, S) = {weights_shape} (query {query.shape}, key {key.shape}); a "
            "per-batch mask for (B, H, L, S) weights is (B, 1, L, S)"
        )
    return query, key, value, mask


def _scale(scale: float | None, width: int, fn: str) -> float:
    if scale is None:
        return 1 / math.sqrt(width)
    if not isinstance(scale, (int, float, np.integer, np.floating)) or isinstance(scale, bool):
        raise TypeError(
            f"{fn}: scale must be a number (or None for 1/sqrt(E)), got {type(scale).__name__}"
        )
    return float(scale)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | np.ndarray | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """softmax(query @ key^T * scale (+ mask)) @ value, in one fused node.

    Shapes, as PyTorch: query `(..., L, E)`, key `(..., S, E)`, value `(..., S, Ev)` ->
    `(..., L, Ev)`; batch axes broadcast. `scale` defaults to 1/sqrt(E). A bool `attn_mask`
    is True where attention is ALLOWED; a float mask is added to the scores; either must
    broadcast to `(..., L, S)`. `is_causal=True` lets position i attend to j <= i (aligned
    top-left when L != S) and excludes `attn_mask`. A row with every key masked gives zeros.
    `dropout_p > 0` drops attention weights as PyTorch does (always, whatever the mode: pass
    `dropout_p=p if self.training else 0`); it runs the composed steps instead of the fused op.
    """
    fn = "scaled_dot_product_attention"
    query, key, value, mask = _attention_args(fn, query, key, value, attn_mask, is_causal)
    if dropout_p:
        weights = dropout(_weights(query, key, mask, is_causal, scale, fn), dropout_p)
        return weights @ value  # (..., L, Ev)
    scale = _scale(scale, query.shape[-1], fn)
    masks = () if mask is None else (mask,)
    return ScaledDotProductAttention.apply(
        query, key, value, *masks, scale=scale, is_causal=bool(is_causal)
    )


def _weights(
    query: Tensor,
    key: Tensor,
    mask: Tensor | None,
    is_causal: bool,
    scale: float | None,
    fn: str,
) -> Tensor:
    """The composed attention table for checked arguments (see `attention_weights`)."""
    scale = _scale(scale, query.shape[-1], fn)
    scores = (query @ key.swapaxes(-1, -2)) * scale  # (..., L, S)
    scores.name = "scores"
    allowed = None
    if is_causal:
        allowed = causal_mask(query.shape[-2], key.shape[-2])  # (L, S)
    elif mask is not None and mask.dtype == np.bool_:
        allowed = mask._data  # (..., L, S)
    elif mask is not None:
        scores = scores + mask
        scores.name = "masked_scores"
        # A row the float mask blocks entirely (all -inf) is NaN through softmax; like the
        # fused op, give it zeros: block the whole row as a bool mask would.
        dead = np.isneginf(scores._data).all(axis=-1, keepdims=True)  # (..., L, 1)
        if dead.any():
            allowed = ~dead
    if allowed is None:
        weights = scores.softmax(axis=-1)
    else:
        # The most negative finite value, not -inf: a fully masked row then stays finite
        # (uniform) through softmax, and the second fill turns it into zeros, as the fused op.
        blocked = ~allowed
        scores = scores.masked_fill(blocked, np.finfo(scores.dtype).min)
        scores.name = "masked_scores"
        weights = scores.softmax(axis=-1).masked_fill(blocked, 0.0)
    weights.name = "weights"
    return weights  # (..., L, S)


def attention_weights(
    query: Tensor,
    key: Tensor,
    attn_mask: Tensor | np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """The attention table softmax(query @ key^T * scale (+ mask)), `(..., L, S)`, built from
    primitive ops with named steps (`scores`, `masked_scores`, `weights`): row i says how much
    query i attends to each key. Masks as in `scaled_dot_product_attention`."""
    query, key, _, mask = _attention_args(
        "attention_weights", query, key, None, attn_mask, is_causal
    )
    return _weights(query, key, mask, is_causal, scale, "attention_weights")


def attention_composed(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | np.ndarray | None = None,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    """`scaled_dot_product_attention` written step by step with primitive ops, so a graph shows
    the article's steps (scores -> weights -> weighted sum of values). Same arguments, same
    result (to rounding); slower and heavier than the fused op."""
    query, key, value, mask = _attention_args(
        "attention_composed", query, key, value, attn_mask, is_causal
    )
    weights = _weights(query, key, mask, is_causal, scale, "attention_composed")  # (..., L, S)
    out = weights @ value  # (..., L, Ev): the weights applied to the values
    out.name = "output"
    return out


# ------------------------------------------- more activations (PyTorch's names; Tensor methods)
def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    return _tensor(x, "leaky_relu").leaky_relu(negative_slope)


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _tensor(x, "elu").elu(alpha)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta (x itself past the threshold, as PyTorch)."""
    return _tensor(x, "softplus").softplus(beta, threshold)


def silu(x: Tensor) -> Tensor:
    """x * sigmoid(x)."""
    return _tensor(x, "silu").silu()


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace=False) -> Tensor:
    """x clamped to [min_val, max_val]."""
    return _tensor(x, "hardtanh").hardtanh(min_val, max_val)


# PyTorch's other functional forms (more losses, logsumexp, normalize, pad, one_hot, embedding)
from . import functional_more  # noqa: E402
from .functional_more import *  # noqa: E402, F403

__all__ += functional_more.__all__
