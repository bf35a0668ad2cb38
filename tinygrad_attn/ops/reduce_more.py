"""More reductions over axes: min, prod, cumsum (NumPy's `axis` / `keepdims`)."""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import expand_reduced, frozen, normalize_axes, normalize_axis


class Min(Function):
    """out = min(a, axis);  da = dout / k at the k elements equal to the min, else 0 (ties split)"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        if a.size == 0:
            raise ValueError(f"Min: cannot take the min of an empty tensor (shape {a.shape})")
        ctx.axes = normalize_axes(axis, a.ndim, "Min", a.shape)
        ctx.keepdims = keepdims
        out = np.min(a, axis=ctx.axes, keepdims=True)
        is_min = a == out  # (shape of a), True at every tied minimum
        ctx.save_for_backward(frozen(is_min), frozen(is_min.sum(axis=ctx.axes, keepdims=True)))
        return out if keepdims else np.squeeze(out, axis=ctx.axes)

    @staticmethod
    def backward(ctx, grad_out):
        is_min, count = ctx.saved_tensors
        if not ctx.keepdims:
            grad_out = np.expand_dims(grad_out, ctx.axes)
        return (is_min * (grad_out / count),)


class Prod(Function):
    """out = prod(a, axis);  da_i = dout * (product of the other elements), from prefix and
    suffix products so that zeros give the exact gradient (no division by a)"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.axes = normalize_axes(axis, a.ndim, "Prod", a.shape)
        ctx.keepdims = keepdims
        ctx.shape = a.shape
        ctx.save_for_backward(a)
        return np.prod(a, axis=ctx.axes, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        kept = [i for i in range(a.ndim) if i not in ctx.axes]
        moved = np.transpose(a, kept + list(ctx.axes))  # (kept..., reduced...)
        flat = moved.reshape(*moved.shape[: len(kept)], -1)  # (kept..., N)
        ones = np.ones(flat.shape[:-1] + (1,), dtype=a.dtype)
        before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        others = (before * after).reshape(moved.shape)  # product of all but each element
        others = np.transpose(others, np.argsort(kept + list(ctx.axes)))  # a's shape
        return (expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.shape) * others,)


class Cumsum(Function):
    """out = cumsum(a, axis);  da = reversed cumsum of dout along axis"""

    @staticmethod
    def forward(ctx, a, axis=0):
        ctx.axis = normalize_axis(axis, a.ndim, "Cumsum", a.shape)
        return np.cumsum(a, axis=ctx.axis)

    @staticmethod
    def backward(ctx, grad_out):
        flipped = np.flip(grad_out, ctx.axis)
        return (np.flip(np.cumsum(flipped, axis=ctx.axis), ctx.axis),)
