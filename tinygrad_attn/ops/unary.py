"""More elementwise ops: sin, cos, log1p, expm1, clip, maximum/minimum and activations.

As in `elementwise.py`, binary ops return gradients in the broadcast output shape and the
engine sums them back to each input's shape.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ..higher_order import graph_saved, where
from ._util import frozen, select
from .elementwise import float_input


class Sin(Function):
    """out = sin(a);  da = dout * cos(a)"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (grad_out * np.cos(a),)


class Cos(Function):
    """out = cos(a);  da = -dout * sin(a)"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        ctx.save_for_backward(a)
        return np.cos(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (-grad_out * np.sin(a),)


class Log1p(Function):
    """out = log(1 + a);  da = dout / (1 + a)"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):  # log1p(-1) = -inf, as PyTorch
            return np.log1p(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (grad_out / (1 + a),)


class Expm1(Function):
    """out = exp(a) - 1;  da = dout * (out + 1)"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        with np.errstate(over="ignore"):  # (inf, as PyTorch)
            out = np.expm1(float_input(a))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return (grad_out * (out + 1),)


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


class Sign(Function):
    """out = sign(a) (-1, 0 or 1);  da = 0 (PyTorch's: a zero gradient, not none)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        return np.sign(a)

    @staticmethod
    def backward(ctx, grad_out):
        return (np.zeros_like(grad_out),)


class Round(Function):
    """out = a rounded (mode "floor", "ceil", "trunc", or "round": to `decimals` places, half to
    even, as PyTorch);  da = 0 (a step function)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, mode, decimals=0):
        ctx.mode = mode
        if a.dtype.kind != "f":
            return a.copy()  # (an integer is its own rounding)
        if mode == "round":
            return np.round(a, decimals)
        return {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}[mode](a)

    @staticmethod
    def backward(ctx, grad_out):
        return (np.zeros_like(grad_out),)
