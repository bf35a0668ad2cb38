"""The elementwise functions of one tensor: exp, log, sqrt, tanh, sigmoid, erf, sin, cos, log1p,
expm1, abs, sign and round (an integer input becomes the default float dtype, as PyTorch's).
Activations are in activations.py, bounds (clip, maximum, minimum) in clamping.py.
"""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from ._erf import erf_float32
from ._util import blockwise, float_input

_erf = np.frompyfunc(math.erf, 1, 1)


class Exp(Function):
    """out = exp(a);  da = dout * out"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        with np.errstate(over="ignore"):  # exp(1000) is inf, as PyTorch: no warning
            out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return (grad_out * out,)


class Log(Function):
    """out = log(a);  da = dout / a"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):  # log(0) = -inf, as PyTorch
            return np.log(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (grad_out / a,)


class Sqrt(Function):
    """out = sqrt(a);  da = dout / (2 * out)"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        with np.errstate(invalid="ignore"):  # sqrt(-1) = nan, as PyTorch: no warning
            out = np.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return (grad_out / (2 * out),)


class Tanh(Function):
    """out = tanh(a);  da = dout * (1 - out**2)"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        out = np.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return (grad_out * (1 - out * out),)


class Sigmoid(Function):
    """out = 1 / (1 + exp(-a));  da = dout * out * (1 - out)"""

    saved_as = ("out",)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        # exp(-a) overflows to inf for a very negative a, and 1 / (1 + inf) is 0, the limit:
        # exact at both ends, with no choice per element (NumPy's `where` on a mask of signs
        # costs ten passes' worth).
        # (float16 in float32: its exp would overflow from a = -11, where sigmoid is 2e-5)
        work = np.promote_types(a.dtype, np.float32)
        out = np.negative(a, out=np.empty(a.shape, work))  # (an array, even for 0-d a)
        with np.errstate(over="ignore"):
            np.exp(out, out=out)
        out += 1
        np.reciprocal(out, out=out)
        out = out.astype(a.dtype, copy=False)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return (grad_out * out * (1 - out),)


class Abs(Function):
    """out = |a|;  da = dout * sign(a)  (0 at a = 0, as PyTorch)"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (grad_out * np.sign(a),)


class Erf(Function):
    """out = erf(a);  da = dout * 2/sqrt(pi) * exp(-a**2)"""

    saved_as = (0,)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        a = float_input(a)
        ctx.save_for_backward(a)
        if a.dtype == np.float32:  # NumPy has no erf: polynomials, in blocks (ops/_erf.py)
            (out,) = blockwise(erf_float32, a, outputs=1, scratch=4)
            return out
        # math.erf per element, exact, which gradcheck needs (float64)
        return np.asarray(_erf(a), dtype=a.dtype)  # a 0-d input gives a Python float

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (grad_out * (2 / math.sqrt(math.pi)) * np.exp(-a * a),)


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
