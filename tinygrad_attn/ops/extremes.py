"""The extremes over axes: max and min (NumPy's `axis` / `keepdims`). Tied extremes share the
gradient evenly; NaN counts as the extreme of its row, as in PyTorch."""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import frozen, normalize_axes


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


class Min(Function):
    """out = min(a, axis);  da = dout / k at the k elements equal to the min, else 0 (ties split)"""

    saved_as = (None, None)  # (the minima: constants for backward_graph)

    @staticmethod
    def forward(ctx, a, axis=None, keepdims=False):
        return extreme_forward(ctx, a, np.min, "Min", axis, keepdims)

    @staticmethod
    def backward(ctx, grad_out):
        return extreme_backward(ctx, grad_out)
