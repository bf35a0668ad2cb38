"""Running reductions along one axis: cumsum."""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import normalize_axis


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
