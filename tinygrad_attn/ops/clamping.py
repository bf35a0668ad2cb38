"""Bounds: clip (clamp, hardtanh) and the elementwise maximum and minimum of two tensors, whose
gradients go where the bound or the larger (smaller) value was taken.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import frozen


class Clip(Function):
    """out = min(max(a, low), high) (numbers);  da = dout where low <= a <= high, else 0"""

    saved_as = (None,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, low=None, high=None):
        # (min above max gives max everywhere, with no gradient, as PyTorch)
        inside = np.ones(a.shape, dtype=np.bool_)
        if low is not None:
            inside &= a >= low
        if high is not None:
            inside &= a <= high
        ctx.save_for_backward(frozen(inside))
        return np.clip(a, low, high).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_out):
        (inside,) = ctx.saved_tensors
        return (grad_out * inside,)


class Maximum(Function):
    """out = maximum(a, b);  da = dout where a > b, db = dout where b > a, half each at ties"""

    saved_as = (0, 1)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        out = np.maximum(a, b)
        ctx.save_for_backward(a, b)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        share = (a > b) + 0.5 * (a == b)  # a's share of the gradient
        grad_a = grad_out * share if ctx.needs_input_grad[0] else None
        grad_b = grad_out * (1 - share) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Minimum(Function):
    """out = minimum(a, b);  da = dout where a < b, db = dout where b < a, half each at ties"""

    saved_as = (0, 1)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        out = np.minimum(a, b)
        ctx.save_for_backward(a, b)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        share = (a < b) + 0.5 * (a == b)  # a's share of the gradient
        grad_a = grad_out * share if ctx.needs_input_grad[0] else None
        grad_b = grad_out * (1 - share) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b
