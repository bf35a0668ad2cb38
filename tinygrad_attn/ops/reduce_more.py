"""More reductions over axes: min, prod, the p-norm, cumsum (NumPy's `axis` / `keepdims`)."""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import graph_inputs, where
from ._util import expand_reduced, frozen, normalize_axes, normalize_axis
from .elementwise import float_input
from .reduce import extreme_backward, extreme_forward


class Min(Function):
    """out = min(a, axis);  da = dout / k at the k elements equal to the min, else 0 (ties split)"""

    saved_as = (None, None)  # (the minima: constants for backward_graph)

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return extreme_forward(ctx, a, np.min, "Min", axis, keepdims)

    @staticmethod
    def backward(ctx, grad_out):
        return extreme_backward(ctx, grad_out)


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

    @staticmethod
    def backward_graph(ctx, grad_out):
        from ..creation import cat, stack

        (a,) = graph_inputs(ctx, *ctx.saved_tensors)
        if not ctx.axes:  # (a product over no axis is a itself)
            return (grad_out * 1.0,)
        kept = [i for i in range(a.ndim) if i not in ctx.axes]
        moved = a.permute(kept + list(ctx.axes))  # (kept..., reduced...)
        flat = moved.reshape(*moved.shape[: len(kept)], -1)  # (kept..., N)
        n = flat.shape[-1]
        others = stack(  # product of all but element j, for each j (no division: exact at 0)
            [cat([flat[..., :j], flat[..., j + 1 :]], dim=-1).prod(dim=-1) for j in range(n)],
            dim=-1,
        ).reshape(moved.shape)
        others = others.permute([int(i) for i in np.argsort(kept + list(ctx.axes))])
        return (expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.shape) * others,)


class Norm(Function):
    """out = (sum |a|^p)^(1/p) over axis (p finite and > 0);  da = dout * sign(a) |a|^(p-1) /
    out^(p-1), and 0 where out is 0 (PyTorch's subgradient: no NaN at the zero vector)"""

    @staticmethod
    def forward(ctx, a, p=2, axis=None, keepdims=False):
        a = float_input(a)
        ctx.p, ctx.keepdims = p, keepdims
        ctx.axes = normalize_axes(axis, a.ndim, "Norm", a.shape)
        if p == 2:
            out = np.sqrt(np.sum(a * a, axis=ctx.axes, keepdims=True))
        else:
            out = np.sum(np.abs(a) ** p, axis=ctx.axes, keepdims=True) ** (1 / p)
        ctx.save_for_backward(a, frozen(out))
        return out if keepdims else np.squeeze(out, axis=ctx.axes)

    @staticmethod
    def backward(ctx, grad_out):
        a, out = ctx.saved_tensors
        if not ctx.keepdims:
            grad_out = np.expand_dims(grad_out, ctx.axes)
        safe = np.where(out == 0, 1, out)  # a zero norm: every element 0, where the slope is 0
        scale = grad_out / (safe if ctx.p == 2 else safe ** (ctx.p - 1))
        if ctx.p == 2:
            return (scale * a,)
        with np.errstate(divide="ignore", invalid="ignore"):  # p < 1 at a 0: set to 0 below
            slope = np.sign(a) * np.abs(a) ** (ctx.p - 1)
        slope[a == 0] = 0
        return (scale * slope,)

    @staticmethod
    def backward_graph(ctx, grad_out):
        (a,) = graph_inputs(ctx, ctx.saved_tensors[0])
        if not ctx.keepdims:
            grad_out = grad_out.reshape([1 if i in ctx.axes else n for i, n in enumerate(a.shape)])
        p = ctx.p
        out = (a.abs() ** p).sum(dim=ctx.axes, keepdim=True) ** (1 / p)  # (recomputed)
        safe = where(out == 0, 1.0, out)  # a zero norm: every element 0, where the slope is 0
        if p == 2:
            return (grad_out / safe * a,)
        slope = where(a == 0, 0.0, a.sign() * a.abs() ** (p - 1))
        return (grad_out / safe ** (p - 1) * slope,)


class Cumsum(Function):
    """out = cumsum(a, axis);  da = reversed cumsum of dout along axis"""

    saved_as = ()  # (backward_graph: its backward runs on Tensors, see higher_order.py)

    @staticmethod
    def forward(ctx, a, axis=0):
        ctx.axis = normalize_axis(axis, a.ndim, "Cumsum", a.shape)
        return np.cumsum(a, axis=ctx.axis)

    @staticmethod
    def backward(ctx, grad_out):
        flipped = np.flip(grad_out, ctx.axis)
        return (np.flip(np.cumsum(flipped, axis=ctx.axis), ctx.axis),)
