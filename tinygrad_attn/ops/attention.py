"""Fused scaled dot-product attention: one node, one hand-derived backward.

The same computation written with primitive ops (`functional.attention_composed`) shows every
step in the graph; this op does it in one node, saving only q, k, v and the attention weights,
and is what `F.scaled_dot_product_attention` and the nn layers use.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import composite_backward
from ._util import broadcast_shape, frozen, row_sums


def causal_mask(length: int, source_length: int) -> np.ndarray:
    """(L, S) bool, True where query i may attend to key j (j <= i), aligned top-left."""
    return np.tri(length, source_length, dtype=bool)


def _fits(mask: np.ndarray, scores: np.ndarray) -> bool:
    """Whether `mask` broadcasts to the scores' shape, so the scores can take it in place (a
    mask that does not broadcast at all is refused here, naming the op and both shapes)."""
    return broadcast_shape("ScaledDotProductAttention", mask.shape, scores.shape) == scores.shape


class ScaledDotProductAttention(Function):
    """out = P @ v with P = softmax(scale * q @ k^T (+ mask));
    dv = P^T @ dout,  dP = dout @ v^T,  dS = P * (dP - sum(dP * P)),
    dq = scale * dS @ k,  dk = scale * dS^T @ q,  d(float mask) = dS"""

    @staticmethod
    def forward(ctx, q, k, v, *mask, scale, is_causal=False):
        # The scale on q (usually smaller than the scores), in the inputs' dtype: a NumPy
        # float64 scale must not make a float32 step float64.
        given = q
        q = np.multiply(q, scale, dtype=np.result_type(q, k, v))  # (..., L, E)
        scores = q @ k.swapaxes(-1, -2)  # (..., L, S)
        allowed = None
        if is_causal:
            allowed = causal_mask(q.shape[-2], k.shape[-2])  # (L, S)
        elif mask and mask[0].dtype == np.bool_:
            allowed = mask[0]  # (..., L, S), True = may attend
        elif mask and mask[0].dtype == scores.dtype and _fits(mask[0], scores):
            scores += mask[0]  # a float mask is added to the scores (here in place)
        elif mask:
            scores = scores + mask[0]
        if allowed is not None and _fits(allowed, scores):
            np.copyto(scores, -np.inf, where=~allowed)  # (in place: no new array of scores)
        elif allowed is not None:  # a mask with more batch axes than the scores
            scores = np.where(allowed, scores, -np.inf)
        masked = bool(mask) or is_causal
        # Softmax with the row max subtracted. With a mask, a row with every key masked has
        # max -inf: use 0 there so exp gives zeros, and divide by 1 so its weights stay 0.
        row_max = scores.max(axis=-1, keepdims=True, initial=-np.inf)  # (S = 0: no keys)
        if masked:
            row_max[~np.isfinite(row_max)] = 0
        weights = scores
        weights -= row_max
        np.exp(weights, out=weights)
        total = row_sums(weights)[..., None]
        if masked:
            total[total == 0] = 1
        weights /= total  # (..., L, S)
        ctx.scale, ctx.is_causal = scale, is_causal
        ctx.save_for_backward(given, k, v, frozen(weights), *mask)
        return weights @ v  # (..., L, Ev)

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, weights = ctx.saved_tensors[:4]
        grad_v = weights.swapaxes(-1, -2) @ grad_out  # (..., S, Ev)
        grad_weights = grad_out @ v.swapaxes(-1, -2)  # (..., L, S)
        grad_scores = grad_weights
        grad_scores -= np.einsum("...s,...s->...", grad_weights, weights)[..., None]
        grad_scores *= weights  # softmax backward, in place on a fresh array
        masked = len(ctx.parents) == 4 and ctx.needs_input_grad[3]
        grad_mask = grad_scores.copy() if masked else None
        grad_scores *= ctx.scale  # (once, in place, for both: it keeps its dtype)
        grad_q = grad_scores @ k  # (..., L, E)
        grad_k = grad_scores.swapaxes(-1, -2) @ q  # (..., S, E)
        if len(ctx.parents) == 4:
            return grad_q, grad_k, grad_v, grad_mask
        return grad_q, grad_k, grad_v

    @staticmethod
    def backward_graph(ctx, grad_out):
        q, k, v, _, *mask = ctx.saved_tensors

        def attention(q, k, v, *mask):  # (the same maths as primitive ops: a graph)
            from ..functional import attention_composed

            return attention_composed(
                q, k, v, mask[0] if mask else None, is_causal=ctx.is_causal, scale=ctx.scale
            )

        return composite_backward(ctx, grad_out, attention, (q, k, v, *mask))
