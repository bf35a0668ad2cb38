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
from ..higher_order import graph_inputs, where
from ._util import expand_reduced, float_input, frozen, normalize_axes


def _count(shape: tuple, axes: tuple) -> int:
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


class Sum(Function):
    """out = sum(a, axis);  da = dout broadcast over the summed axes"""

    saved_as = ()  # (backward_graph: its backward runs on Tensors, see higher_order.py)

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

    saved_as = ()  # (backward_graph: its backward runs on Tensors, see higher_order.py)

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


class Var(Function):
    """out = sum((a - mean)**2) / (N - ddof);  da = dout * 2 (a - mean) / (N - ddof)"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False, ddof=0):
        a = float_input(a)
        out, centered = _variance(ctx, a, axis, keepdims, ddof, "Var")
        ctx.save_for_backward(frozen(centered), a)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        centered = ctx.saved_tensors[0]
        spread = expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.input_shape)
        if not ctx.divisor:
            with np.errstate(divide="ignore", invalid="ignore"):
                return (spread * centered * np.inf,)  # 2 / 0
        return (spread * centered * (2 / ctx.divisor),)

    @staticmethod
    def backward_graph(ctx, grad_out):
        (a,) = graph_inputs(ctx, ctx.saved_tensors[1])
        centered = a - a.mean(dim=ctx.axes, keepdim=True)  # (recomputed: it depends on a)
        spread = expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.input_shape)
        return (spread * centered * (2 / ctx.divisor if ctx.divisor else np.inf),)


class Std(Function):
    """out = sqrt(var(a));  da = dout (a - mean) / ((N - ddof) out), and 0 where out == 0 (at
    zero spread: PyTorch's std, where var().sqrt() would give inf * 0)"""

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False, ddof=0):
        a = float_input(a)
        var, centered = _variance(ctx, a, axis, keepdims, ddof, "Std")
        out = np.sqrt(var)
        ctx.save_for_backward(frozen(centered), a, frozen(out))
        return out

    @staticmethod
    def backward(ctx, grad_out):
        centered, _, out = ctx.saved_tensors  # (out: the result, shaped as grad_out)
        with np.errstate(divide="ignore", invalid="ignore"):  # (0 where out == 0, below)
            scale = np.where(out == 0, 0, grad_out / (out * ctx.divisor))
        return (expand_reduced(scale, ctx.axes, ctx.keepdims, ctx.input_shape) * centered,)

    @staticmethod
    def backward_graph(ctx, grad_out):
        (a,) = graph_inputs(ctx, ctx.saved_tensors[1])
        out = Std.apply(a, axis=ctx.axes, keepdims=ctx.keepdims, ddof=ctx.ddof)  # (recomputed)
        centered = a - a.mean(dim=ctx.axes, keepdim=True)
        flat = out == 0  # (a safe divisor there too, so that no NaN flows back through it)
        scale = where(flat, 0.0, grad_out / (where(flat, 1.0, out) * ctx.divisor))
        return (expand_reduced(scale, ctx.axes, ctx.keepdims, ctx.input_shape) * centered,)


def _variance(ctx, a: np.ndarray, axis, keepdims: bool, ddof, name: str) -> tuple:
    """The forward of Var and Std: (the variance, a - mean), with the op's parameters on ctx."""
    ctx.axes = normalize_axes(axis, a.ndim, name, a.shape)
    ctx.keepdims, ctx.input_shape, ctx.ddof = keepdims, a.shape, ddof
    if not isinstance(ddof, (int, float, np.integer, np.floating)) or isinstance(ddof, bool):
        raise TypeError(f"{name}: ddof must be a number, got {type(ddof).__name__}")
    count = _count(a.shape, ctx.axes)
    ctx.divisor = max(count - ddof, 0)
    if ctx.divisor == 0:
        warnings.warn(
            f"{name}: ddof={ddof} leaves no degrees of freedom (N={count} elements per result, "
            f"shape {a.shape} over axes {ctx.axes}): the result is NaN or inf, as in NumPy "
            "and PyTorch. Use a smaller ddof, or reduce over more elements.",
            RuntimeWarning,
            stacklevel=6,  # the caller of x.var(...) (_spread, Tensor.var, apply, forward)
        )
    total, centered = _centered_squares(a, ctx.axes, keepdims)
    if ctx.divisor:
        return (total / ctx.divisor).astype(a.dtype, copy=False), centered
    with np.errstate(divide="ignore", invalid="ignore"):  # (the warning above says it)
        return np.divide(total, 0.0).astype(a.dtype, copy=False), centered


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
