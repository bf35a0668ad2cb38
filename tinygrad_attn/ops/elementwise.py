"""Elementwise ops: arithmetic (with NumPy broadcasting) and the unary functions.

Binary ops return gradients in the broadcast output shape; the engine sums them back to each
input's shape. Gradients for an input that does not need one are not computed
(`ctx.needs_input_grad`), which also keeps `x ** 2` from taking log(x).
"""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from ..state import get_default_dtype
from ._erf import erf_float32
from ._util import blockwise, broadcast_shape


def float_input(a: np.ndarray) -> np.ndarray:
    """The input of a float function (exp, erf, softmax, ...): integers and bools become the
    default float dtype, as in PyTorch (NumPy would pick float16 for int8, float64 for int64)."""
    return a if a.dtype.kind == "f" else a.astype(get_default_dtype())


def compare(symbol: str, ufunc: np.ufunc, a: np.ndarray, other: object) -> np.ndarray:
    """A comparison operator's bool result (no graph node), with shape errors that name it."""
    b = np.asarray(other)
    if b.dtype.kind not in "fiub":
        raise TypeError(
            f"comparison {symbol}: cannot compare a {a.dtype} tensor with "
            f"{type(other).__name__} (dtype {b.dtype}); compare with numbers or tensors"
        )
    try:
        return np.asarray(ufunc(a, b))  # (an array even for 0-d: a tensor holds an ndarray)
    except ValueError:
        broadcast_shape(f"comparison {symbol}", a.shape, b.shape)  # raises the readable error
        raise


class Add(Function):
    """out = a + b;  da = dout,  db = dout"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out


class Sub(Function):
    """out = a - b;  da = dout,  db = -dout"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        return a - b

    @staticmethod
    def backward(ctx, grad_out):
        grad_b = -grad_out if ctx.needs_input_grad[1] else None
        return grad_out, grad_b


class Mul(Function):
    """out = a * b;  da = dout * b,  db = dout * a"""

    saved_as = (0, 1)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad  # (each operand is saved for the other's gradient)
        ctx.save_for_backward(a if needs[1] else None, b if needs[0] else None)
        return a * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_a = grad_out * b if ctx.needs_input_grad[0] else None
        grad_b = grad_out * a if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class Div(Function):
    """out = a / b;  da = dout / b,  db = -dout * a / b**2"""

    saved_as = (0, 1)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        if a.dtype.kind != "f" and b.dtype.kind != "f":  # int / int: a float, as PyTorch
            a, b = float_input(a), float_input(b)
        ctx.save_for_backward(a, b)
        if b.ndim == 0 and b != 0:  # (x / 2: nothing for NumPy to warn about)
            return a / b
        with np.errstate(divide="ignore", invalid="ignore"):  # x / 0 is inf, as PyTorch: no warning
            return a / b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_a = grad_out / b if ctx.needs_input_grad[0] else None
        grad_b = -grad_out * a / (b * b) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b


class DivRounded(Function):
    """out = a / b rounded down (mode "floor": `//`) or toward zero ("trunc");  da = db = 0
    (the result is a step function of a and b, as PyTorch's div with a rounding_mode)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b, mode):
        if mode not in ("floor", "trunc"):
            raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got {mode!r}")
        ctx.mode = mode
        if a.dtype.kind in "iub" and b.dtype.kind in "iub":
            with np.errstate(divide="raise"):
                try:
                    out = np.floor_divide(a, b)
                except FloatingPointError:
                    raise ZeroDivisionError("div: integer division by zero") from None
            if mode == "trunc":  # floor and trunc differ where the signs differ
                out = out + ((out < 0) & (out * b != a))
            return out
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.floor_divide(a, b) if mode == "floor" else np.trunc(a / b)

    @staticmethod
    def backward(ctx, grad_out):
        zero = np.zeros_like(grad_out)
        return zero, zero


class Remainder(Function):
    """out = a - floor(a / b) * b (the sign of b, as Python's % and PyTorch's remainder);
    da = dout,  db = -dout * floor(a / b)"""

    saved_as = (0, 1)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        needs = ctx.needs_input_grad
        ctx.save_for_backward(a if needs[1] else None, b if needs[1] else None)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.remainder(a, b)

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad_b = -grad_out * np.floor_divide(a, b) if ctx.needs_input_grad[1] else None
        return grad_out, grad_b


class Neg(Function):
    """out = -a;  da = -dout"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        return np.negative(a)

    @staticmethod
    def backward(ctx, grad_out):
        return (-grad_out,)


class Pow(Function):
    """out = a ** b;  da = dout * b * a**(b-1) (0 where b == 0),
    db = dout * out * log(a) (0 where a == 0 and b >= 0)"""

    saved_as = (0, 1, "out")  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, b):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # (0 ** -1 is inf)
            out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, b, out = ctx.saved_tensors
        grad_a = grad_b = None
        # As PyTorch, mask the terms that are 0 * inf at a zero base: d(a**0)/da = 0 even at
        # a = 0, and d(0**b)/db = 0 for b >= 0 (the limit from the right; log(0) = -inf).
        if ctx.needs_input_grad[0] and b.ndim == 0 and b >= 1:
            grad_a = grad_out * b * np.power(a, b - 1)  # x ** 2: finite, nothing to mask
        elif ctx.needs_input_grad[0]:
            with np.errstate(divide="ignore", invalid="ignore"):  # (np.errstate: ~1 us)
                grad_a = np.where(b == 0, 0, grad_out * b * np.power(a, b - 1))
        if ctx.needs_input_grad[1]:
            with np.errstate(divide="ignore", invalid="ignore"):
                grad_b = np.where((a == 0) & (b >= 0), 0, grad_out * out * np.log(a))
        return grad_a, grad_b


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


_erf = np.frompyfunc(math.erf, 1, 1)


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
