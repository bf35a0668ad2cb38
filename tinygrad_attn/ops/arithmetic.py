"""Arithmetic: + - * / // % negation and ** (with NumPy broadcasting), and the comparisons.

Binary ops return gradients in the broadcast output shape; the engine sums them back to each
input's shape. Gradients for an input that does not need one are not computed
(`ctx.needs_input_grad`), which also keeps `x ** 2` from taking log(x). A comparison's result
is a bool array that takes no gradient, so it is a function (`compare`), not an op.
"""

from __future__ import annotations

import numpy as np

from ..errors import IntegerDivisionByZero
from ..function import Function
from ._util import broadcast_shape, float_input


def compare(symbol: str, ufunc: np.ufunc, a: np.ndarray, other: object) -> np.ndarray:
    """A comparison operator's bool result (no graph node), with shape errors that name it.
    A list or tuple is refused, as PyTorch refuses it (and as `+` here does)."""
    if isinstance(other, (list, tuple)):
        raise TypeError(
            f"comparison {symbol}: cannot compare a {a.dtype} tensor with a "
            f"{type(other).__name__}; make it a tensor first: torch.tensor({other!r})"
        )
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
                    raise IntegerDivisionByZero("div: integer division by zero") from None
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
        if a.dtype.kind in "iub" and b.dtype.kind in "iub" and not np.all(b):
            raise IntegerDivisionByZero("remainder: integer division by zero")
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
