"""Reductions over axes: sum, mean, max, var (NumPy's `axis` / `keepdims`).

Each backward spreads the incoming gradient back over the reduced axes (`expand_reduced`):
that is the reduction's own calculus, not un-broadcasting, which only the engine does.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..function import Function
from ..higher_order import graph_inputs
from ._util import expand_reduced, frozen, normalize_axes
from .elementwise import float_input


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


def extreme_forward(ctx, a, pick, name: str, axis, keepdims: bool) -> np.ndarray:
    """The forward of Max and Min (`pick` is np.max or np.min): the extreme over `axis`, and
    which elements attain it. NaN counts as the extreme of its row and gets its gradient, as
    in PyTorch; an empty reduced axis has no extreme and is refused."""
    ctx.axes = normalize_axes(axis, a.ndim, name, a.shape)
    for ax in ctx.axes:
        if a.shape[ax] == 0:
            raise ValueError(
                f"{name}: axis {ax} of shape {a.shape} has no elements, so it has no "
                f"{name.lower()} (NumPy and PyTorch refuse too); reduce over other axes, or "
                "check the shape"
            )
    ctx.keepdims = keepdims
    out = pick(a, axis=ctx.axes, keepdims=True)
    hit = a == out  # (shape of a), True at every tied extreme
    if a.dtype.kind == "f" and np.isnan(out).any():
        hit |= np.isnan(a)  # NaN is the extreme of its row, and gets its gradient (PyTorch)
    ctx.save_for_backward(frozen(hit), frozen(hit.sum(axis=ctx.axes, keepdims=True)))
    return out if keepdims else np.squeeze(out, axis=ctx.axes)


def extreme_backward(ctx, grad_out: np.ndarray) -> tuple:
    """The backward of Max and Min: the gradient split evenly among the tied extremes."""
    hit, count = ctx.saved_tensors
    if not ctx.keepdims:
        grad_out = np.expand_dims(grad_out, ctx.axes)
    return (hit * (grad_out / count),)


class Max(Function):
    """out = max(a, axis);  da = dout / k at the k elements equal to the max, else 0 (ties split)"""

    saved_as = (None, None)  # (the maxima: constants for backward_graph)

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return extreme_forward(ctx, a, np.max, "Max", axis, keepdims)

    @staticmethod
    def backward(ctx, grad_out):
        return extreme_backward(ctx, grad_out)


class Var(Function):
    """out = sum((a - mean)**2) / (N - ddof);  da = dout * 2 (a - mean) / (N - ddof)"""

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
        centered = a - a.mean(axis=ctx.axes, keepdims=True)
        ctx.save_for_backward(frozen(centered), a)
        total = np.sum(centered * centered, axis=ctx.axes, keepdims=keepdims)
        if ctx.divisor:
            return total / ctx.divisor
        with np.errstate(divide="ignore", invalid="ignore"):  # (the warning above says it)
            return np.divide(total, 0.0)

    @staticmethod
    def backward(ctx, grad_out):
        centered = ctx.saved_tensors[0]
        spread = expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.input_shape)
        if ctx.divisor:
            return (spread * centered * (2 / ctx.divisor),)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (spread * centered * np.inf,)  # 2 / 0

    @staticmethod
    def backward_graph(ctx, grad_out):
        (a,) = graph_inputs(ctx, ctx.saved_tensors[1])
        centered = a - a.mean(dim=ctx.axes, keepdim=True)  # (recomputed: it depends on a)
        spread = expand_reduced(grad_out, ctx.axes, ctx.keepdims, ctx.input_shape)
        return (spread * centered * (2 / ctx.divisor if ctx.divisor else np.inf),)
