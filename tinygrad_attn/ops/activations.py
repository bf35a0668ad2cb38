"""Activations as ops of their own: relu, leaky_relu, elu and softplus (GELU, fused, is in
layers.py; the others of `F` are composed from these and math_functions.py).
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import graph_saved, where
from ._util import frozen, select


class Relu(Function):
    """out = max(a, 0);  da = dout where a > 0, else 0"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        out = np.maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return (grad_out * (out > 0),)


class LeakyRelu(Function):
    """out = a if a > 0 else slope * a;  da = dout * (1 if a > 0 else slope)"""

    saved_as = (None,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, slope=0.01):
        ctx.slope = slope
        # The factor 1 or slope per element, in arithmetic (NumPy's `where` on a mask of signs
        # costs ten passes' worth); it is also the derivative, all that backward needs.
        positive = a > 0
        factor = np.multiply(~positive, slope, dtype=np.result_type(a.dtype, np.float32))
        factor += positive  # exactly 1 where a > 0; slope elsewhere (NaN too, as PyTorch)
        ctx.save_for_backward(frozen(factor))
        return (a * factor).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_out):
        (factor,) = ctx.saved_tensors
        return (grad_out * factor,)


class Elu(Function):
    """out = a if a > 0 else alpha * (exp(a) - 1);  da = dout * (1 if a > 0 else out + alpha)"""

    saved_as = (0, "out")  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, alpha=1.0):
        ctx.alpha = alpha
        # max(a, 0) + alpha (exp(min(a, 0)) - 1): one branch is 0 wherever the other counts
        # (arithmetic: NumPy's `where` on a mask of signs costs ten passes' worth)
        out = alpha * np.expm1(np.minimum(a, 0))
        out += np.maximum(a, 0)
        out = out.astype(a.dtype, copy=False)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, out = ctx.saved_tensors
        # 1 + [a <= 0] (out + alpha - 1), with out clipped at 0 so a = inf adds 0 * finite
        slope = np.minimum(out, 0)
        slope += ctx.alpha - 1
        slope *= a <= 0
        slope += 1  # where a <= 0: out + alpha; elsewhere exactly 1
        return (grad_out * slope,)


class Softplus(Function):
    """out = log(1 + exp(beta a)) / beta (a itself where beta a > threshold);
    da = dout * sigmoid(beta a) (1 past the threshold)"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, beta=1.0, threshold=20.0):
        scaled = a * beta
        ctx.save_for_backward(a)
        ctx.beta, ctx.threshold = beta, threshold
        # log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)): no overflow for large z.
        smooth = (np.maximum(scaled, 0) + np.log1p(np.exp(-np.abs(scaled)))) / beta
        return select(scaled > threshold, a, smooth).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        scaled = a * ctx.beta
        sigmoid = 0.5 * (1 + np.tanh(0.5 * scaled))
        return (grad_out * select(scaled > ctx.threshold, 1.0, sigmoid),)

    @staticmethod
    def backward_graph(ctx, grad_out):
        (a,) = graph_saved(ctx)
        scaled = a * ctx.beta
        return (grad_out * where(scaled > ctx.threshold, 1.0, scaled.sigmoid()),)
