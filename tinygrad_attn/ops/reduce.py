"""Reductions over axes to a value per group: sum, mean, prod, var and the p-norm (NumPy's
`axis` / `keepdims`; the Tensor methods give them PyTorch's spellings).

Each backward spreads the incoming gradient back over the reduced axes (`expand_reduced`):
that is the reduction's own calculus, not un-broadcasting, which only the engine does. The
extremes (max, min) are in extremes.py, running sums in scan.py.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..function import Function
from ._util import expand_reduced, frozen, normalize_axes
from .elementwise import float_input


def _count(shape: tuple, axes: tuple) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


class Sum(Function):
    """out = sum(a, axis);  da = dout broadcast over the summed axes"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        ctx.axes = normalize_axes(axis, a.ndim, "Sum", a.shape)
        ctx.keepdims = keepdims
        ctx.input_shape = a.shape
        return a.sum(axis=ctx.axes, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad_out):
        return (expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.input_shape),)


class Mean(Function):
    """out = mean(a, axis);  da = dout / N broadcast over the averaged axes (N elements each)"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        a = float_input(a)
        ctx.axes = normalize_axes(axis, a.ndim, "Mean", a.shape)
        ctx.keepdims = keepdims
        ctx.input_shape = a.shape
        return np.mean(a, axis=ctx.axes, keepdims=keepdims)

    @staticmethod
    def backward(ctx, grad_out):
        count = _count(ctx.input_shape, ctx.axes)
        return (expand_reduced(grad_out / count, ctx.axes, ctx.keepdims, ctx.input_shape),)


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
        if a.size == 0:  # an empty product is 1 and no element has a gradient
            return (np.zeros(a.shape, dtype=grad_out.dtype),)
        kept = [i for i in range(a.ndim) if i not in ctx.axes]
        moved = np.transpose(a, kept + list(ctx.axes))  # (kept..., reduced...)
        flat = moved.reshape(*moved.shape[: len(kept)], -1)  # (kept..., N)
        ones = np.ones(flat.shape[:-1] + (1,), dtype=a.dtype)
        before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
        after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
        others = (before * after).reshape(moved.shape)  # product of all but each element
        others = np.transpose(others, np.argsort(kept + list(ctx.axes)))  # a's shape
        return (expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.shape) * others,)


class Var(Function):
    """out = sum((a - mean)**2) / (N - ddof);  da = dout * 2 (a - mean) / (N - ddof), and 0
    where a == mean (so that std = sqrt(var) has gradient 0 at zero spread, as PyTorch's std,
    rather than inf * 0)"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False, ddof=0):
        a = float_input(a)
        ctx.axes = normalize_axes(axis, a.ndim, "Var", a.shape)
        ctx.keepdims = keepdims
        ctx.input_shape = a.shape
        if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
            raise TypeError(f"Var: ddof must be a number, got {type(ddof).__name__}")
        count = _count(a.shape, ctx.axes)
        ctx.divisor = max(count - ddof, 0)
        if ctx.divisor == 0:
            warnings.warn(
                f"Var: ddof={ddof} leaves no degrees of freedom (N={count} elements per result, "
                f"shape {a.shape} over axes {ctx.axes}): the result is NaN or inf, as in NumPy "
                "and PyTorch. Use a smaller ddof, or reduce over more elements.",
                RuntimeWarning,
                stacklevel=4,  # the caller of x.var(...)
            )
        total, centered = _centered_squares(a, ctx.axes, keepdims)
        ctx.save_for_backward(frozen(centered))
        if ctx.divisor:
            return (total / ctx.divisor).astype(a.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):  # (the warning above says it)
            return np.divide(total, 0.0).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_out):
        (centered,) = ctx.saved_tensors
        spread = expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.input_shape)
        if not ctx.divisor:
            with np.errstate(divide="ignore", invalid="ignore"):
                return (spread * centered * np.inf,)  # 2 / 0
        with np.errstate(invalid="ignore"):  # (inf * 0 where a == mean: 0 below)
            grad = spread * centered * (2 / ctx.divisor)
        return (np.where(centered == 0, 0, grad).astype(grad.dtype, copy=False),)


def _centered_squares(a: np.ndarray, axes: tuple, keepdims: bool) -> tuple:
    """(sum of (a - mean)^2 over `axes`, a - mean in a's dtype), in float64 with the mean's own
    rounding error taken out (the corrected two-pass sum), so float32 data with a large offset
    keeps its variance to float32's precision (PyTorch's accuracy), not lose it to the offset."""
    wide = a.astype(np.float64, copy=False)
    centered = wide - wide.mean(axis=axes, keepdims=True)
    count = _count(a.shape, axes)
    total = np.sum(centered * centered, axis=axes, keepdims=True)
    if count:
        drift = centered.sum(axis=axes, keepdims=True)  # ~0; what the mean's rounding left
        total -= drift * drift / count
    total = total if keepdims else np.squeeze(total, axis=axes)
    return total, centered.astype(a.dtype, copy=False)


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
