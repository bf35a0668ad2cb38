"""Attention: `scaled_dot_product_attention` (one fused node, `ops.attention`), and its steps
built from primitive ops with named intermediates for reading and drawing (`attention_weights`,
`attention_composed`). One check of the arguments for all three. No backward code here."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ops.attention import ScaledDotProductAttention, causal_mask
from ..tensor import Tensor
from ._checks import _tensor
from .dropout import dropout


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
    enable_gqa: bool = False,
) -> Tensor:
    """softmax(query @ key^T * scale (+ mask)) @ value, in one fused node.

    Shapes, as PyTorch: query `(..., L, E)`, key `(..., S, E)`, value `(..., S, Ev)` ->
    `(..., L, Ev)`; batch axes broadcast. `scale` defaults to 1/sqrt(E). A bool `attn_mask`
    is True where attention is ALLOWED; a float mask is added to the scores; either must
    broadcast to `(..., L, S)`. `is_causal=True` lets position i attend to j <= i (aligned
    top-left when L != S) and excludes `attn_mask`. A row with every key masked gives zeros.
    `dropout_p > 0` drops attention weights as PyTorch does (always, whatever the mode: pass
    `dropout_p=p if self.training else 0`); it runs the composed steps instead of the fused op.
    `enable_gqa=True` (grouped-query attention): key and value may have fewer heads (axis -3)
    than the query, a divisor of its count; each of their heads then serves that many query
    heads in a row (`repeat_interleave` along the heads), as PyTorch's.
    """
    fn = "scaled_dot_product_attention"
    if enable_gqa:
        key = _repeat_heads(fn, query, key, "key")  # (..., Hq, S, E)
        value = _repeat_heads(fn, query, value, "value")  # (..., Hq, S, Ev)
    query, key, value, mask = _attention_args(fn, query, key, value, attn_mask, is_causal)
    if dropout_p:
        weights = dropout(_weights(query, key, mask, is_causal, scale, fn), dropout_p)
        return weights @ value  # (..., L, Ev)
    scale = _scale(scale, query.shape[-1], fn)
    masks = () if mask is None else (mask,)
    return ScaledDotProductAttention.apply(
        query, key, value, *masks, scale=scale, is_causal=bool(is_causal)
    )


def _repeat_heads(fn: str, query: Any, t: Any, what: str) -> Any:
    """`t` (key or value) with its heads (axis -3) repeated to the query's head count, each
    head `Hq / Hk` times in a row, for grouped-query attention."""
    if not (isinstance(query, Tensor) and isinstance(t, Tensor)) or min(query.ndim, t.ndim) < 3:
        return t  # (no heads axis: nothing to group; the checks that follow speak)
    heads, groups = query.shape[-3], t.shape[-3]
    if heads == groups:
        return t
    if groups == 0 or heads % groups:
        raise ShapeError(
            f"{fn}: with enable_gqa=True the number of heads in {what} (axis -3 of "
            f"{t.shape}) must divide the number of heads in query ({heads}, query "
            f"{query.shape})"
        )
    index = np.repeat(np.arange(groups), heads // groups)  # (Hq,): 0, 0, 1, 1, ...
    return t[..., index, :, :]  # (..., Hq, S, E)


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
