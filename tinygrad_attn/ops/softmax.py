"""Softmax and log-softmax along one axis: the normalisation step of attention."""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import normalize_axis
from .elementwise import float_input


class Softmax(Function):
    """y = softmax(x);  dx = y * (dy - sum(dy * y))"""

    @staticmethod
    def forward(ctx, x, axis=-1):
        x = float_input(x)
        ctx.axis = normalize_axis(axis, x.ndim, "Softmax", x.shape)
        # Subtract the row max before exp: exp then never overflows (logits of 1e4 are fine).
        y = x - x.max(axis=ctx.axis, keepdims=True)
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


class LogSoftmax(Function):
    """y = x - log(sum(exp(x)));  dx = dy - softmax(x) * sum(dy)"""

    @staticmethod
    def forward(ctx, x, axis=-1):
        x = float_input(x)
        ctx.axis = normalize_axis(axis, x.ndim, "LogSoftmax", x.shape)
        shifted = x - x.max(axis=ctx.axis, keepdims=True)
        y = shifted - np.log(np.exp(shifted).sum(axis=ctx.axis, keepdims=True))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        (y,) = ctx.saved_tensors
        return (grad_out - np.exp(y) * grad_out.sum(axis=ctx.axis, keepdims=True),)
