"""Softmax and log-softmax along one axis: the normalisation step of attention."""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import graph_saved
from ._util import float_input, normalize_axis


def _axis(axis: int, x: np.ndarray, op: str) -> int | None:
    """The axis to normalise over; None for a 0-d tensor (axis 0 or -1, as in PyTorch)."""
    axis = normalize_axis(axis, x.ndim, op, x.shape)
    return axis if x.ndim else None


def _row_max(x: np.ndarray, axis: int | None) -> np.ndarray:
    # (an empty axis has no max; its softmax is empty all the same)
    return x.max(axis=axis, keepdims=True, initial=-np.inf)


class Softmax(Function):
    """y = softmax(x);  dx = y * (dy - sum(dy * y))"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, x, axis=-1):
        x = float_input(x)
        ctx.axis = _axis(axis, x, "Softmax")
        # Subtract the row max before exp: exp then never overflows (logits of 1e4 are fine).
        y = x - _row_max(x, ctx.axis)
        if y.ndim == 0:
            y = np.array(y)  # (0-d arithmetic gives a NumPy scalar, which exp cannot write)
        np.exp(y, out=y)
        y /= y.sum(axis=ctx.axis, keepdims=True)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        grad_x = grad_out * y
        grad_x -= y * grad_x.sum(axis=ctx.axis, keepdims=True)
        return (grad_x,)

    @staticmethod
    def backward_graph(ctx, grad_out):
        (y,) = graph_saved(ctx)  # the same formula as recorded ops (no in-place step to draw)
        grad_x = grad_out * y
        return (grad_x - y * grad_x.sum(dim=ctx.axis, keepdim=True),)


class LogSoftmax(Function):
    """y = x - log(sum(exp(x)));  dx = dy - softmax(x) * sum(dy)"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, x, axis=-1):
        x = float_input(x)
        ctx.axis = _axis(axis, x, "LogSoftmax")
        shifted = x - _row_max(x, ctx.axis)
        if x.size == 0:
            y = shifted  # an empty axis: nothing to normalise (and log of its sum 0 would warn)
        else:
            y = shifted - np.log(np.exp(shifted).sum(axis=ctx.axis, keepdims=True))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return (grad_out - np.exp(y) * grad_out.sum(axis=ctx.axis, keepdims=True),)
