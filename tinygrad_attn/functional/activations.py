"""Activation functions, as `torch.nn.functional`'s: softmax, log_softmax and softmin, relu,
gelu (one fused node, `gelu_composed` its steps), sigmoid, tanh, leaky_relu, elu, selu, celu,
softplus, silu, mish, hardtanh, relu6, hardsigmoid, hardswish, logsigmoid, softsign,
tanhshrink, threshold, glu.

Each checks its arguments and calls Tensor methods or ops; none has backward code of its own.
At a kink the branch whose gradient PyTorch takes is chosen (hardswish, hardsigmoid and relu6
take the outer branch at their corners; threshold's value where x equals it).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..creation import where
from ..errors import DTypeError
from ..inplace import modify
from ..ops.layers import GELU
from ..tensor import Tensor
from ._checks import _check_float, _tensor


def _implicit_dim(fn: str, ndim: int) -> int:
    """PyTorch's choice when no dim is given (deprecated there, with this warning): 0 for a
    0-, 1- or 3-D input, else 1."""
    warnings.warn(
        f"Implicit dimension choice for {fn} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=4,  # (the caller of F.softmax)
    )
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_args(fn: str, input: Any, dim: Any, axis: Any, dtype: Any) -> tuple:
    """(input cast to `dtype`, dim) for softmax / log_softmax, as PyTorch reads them."""
    input = _tensor(input, fn)
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{fn}(): pass dim= or axis=, not both (they mean the same)")
        dim = axis
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        raise TypeError(
            f"{fn}(): dim must be an int (the axis to normalise over), got {dim!r}; softmax "
            "over no axis means nothing (sum's dim=() is another matter)"
        )
    if dim is not None and not isinstance(dim, (tuple, list)):
        dim = _int_dim(fn, dim)
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise DTypeError(f"{fn}(): dtype must be a float dtype, got {dtype}")
        input = input.to(dtype)  # (cast before the op, as PyTorch: no overflow in half)
    if dim is None:
        dim = _implicit_dim(fn, input.ndim)
    return input, dim


def _int_dim(fn: str, dim: Any) -> int:
    if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{fn}(): dim must be an int, got {type(dim).__name__}")
    return int(dim)


def softmax(
    input: Tensor,
    dim: int | None = None,
    _stacklevel: int = 3,
    dtype: Any = None,
    *,
    axis: int | None = None,
) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (`axis=` is the same; a tuple of dims is accepted
    too), the max subtracted first for stability. As PyTorch: `dtype` casts the input first;
    without a dim, PyTorch's deprecated implicit choice (0 for a 0-, 1- or 3-D input, else 1)
    with its warning."""
    input, dim = _softmax_args("softmax", input, dim, axis, dtype)
    return input.softmax(dim=dim)


def log_softmax(
    input: Tensor,
    dim: int | None = None,
    _stacklevel: int = 3,
    dtype: Any = None,
    *,
    axis: int | None = None,
) -> Tensor:
    """x - log(sum(exp(x))) along `dim` (use it rather than log(softmax(x)), for stability);
    arguments as `softmax`."""
    input, dim = _softmax_args("log_softmax", input, dim, axis, dtype)
    return input.log_softmax(dim=dim)


def _number(fn: str, name: str, value: Any) -> float:
    """A PyTorch "Number" argument (alpha, negative_slope, ...) as a float: a real Python or
    NumPy number, or a 0-d tensor that needs no gradient; PyTorch's errors otherwise."""
    if isinstance(value, Tensor) and value.ndim == 0 and not value.requires_grad:
        value = value.item()
    if isinstance(value, (complex, np.complexfloating)):
        raise DTypeError(f"{fn}(): {name}={value!r} cannot be converted to a real float")
    if not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"{fn}(): argument {name!r} must be a number, not {type(value).__name__}"
            + (" (a 0-d tensor that needs no gradient also works)" if value is not None else "")
        )
    return float(value)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0). `inplace=True` writes the result into `input` and returns it (as PyTorch:
    recorded in the graph when `input` is not a leaf that requires grad)."""
    input = _tensor(input, "relu")
    return input.relu_() if inplace else input.relu()


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return _tensor(x, "sigmoid").sigmoid()


def tanh(x: Tensor) -> Tensor:
    """tanh(x)."""
    return _tensor(x, "tanh").tanh()


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, as PyTorch's `F.gelu`, in one node (`ops.layers.GELU`).

    `approximate="none"`: x * Phi(x) = 0.5 x (1 + erf(x / sqrt(2))), the exact form.
    `approximate="tanh"`: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GPT-2's form.
    `gelu_composed` computes the same from primitive ops.
    """
    x = _tensor(x, "gelu")
    _check_approximate(approximate)
    _check_float(x, "gelu")
    return GELU.apply(x, approximate=approximate)


def gelu_composed(x: Tensor, approximate: str = "none") -> Tensor:
    """`gelu` written with primitive ops (Mul, Add, Erf or Tanh ...), for reading and drawing."""
    x = _tensor(x, "gelu_composed")
    _check_approximate(approximate)
    if approximate == "none":
        return 0.5 * x * (1 + (x * (1 / math.sqrt(2))).erf())
    inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
    return 0.5 * x * (1 + inner.tanh())


def _check_approximate(approximate: Any) -> None:
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x (`inplace=True`: written into `input`)."""
    input = _tensor(input, "leaky_relu")
    slope = _number("leaky_relu", "negative_slope", negative_slope)
    if inplace:
        return modify(input, "leaky_relu_()", lambda t: t.leaky_relu(slope))
    return input.leaky_relu(slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1); `alpha` a number or a 0-d tensor, as PyTorch
    (`inplace=True`: written into `input`)."""
    input = _tensor(input, "elu")
    alpha = _number("elu", "alpha", alpha)
    if inplace:
        return modify(input, "elu_()", lambda t: t.elu(alpha))
    return input.elu(alpha)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta (x itself where beta x > threshold, as PyTorch)."""
    input = _tensor(input, "softplus")
    beta = _number("softplus", "beta", beta)
    return input.softplus(beta, _number("softplus", "threshold", threshold))


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x) (`inplace=True`: written into `input`)."""
    input = _tensor(input, "silu")
    if inplace:
        return modify(input, "silu_()", lambda t: t.silu())
    return input.silu()


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped to [min_val, max_val] (numbers, or 0-d tensors; min_val <= max_val), as
    PyTorch (`inplace=True`: written into `input`)."""
    input = _tensor(input, "hardtanh")
    low = _number("hardtanh", "min_val", min_val)
    high = _number("hardtanh", "max_val", max_val)
    if low > high:
        raise ValueError(f"hardtanh(): min_val cannot be greater than max_val, got {low} > {high}")
    if input._data.dtype.kind in "iu":  # (an integer tensor stays integer, as PyTorch's)
        low, high = int(low), int(high)
    if inplace:
        return modify(input, "hardtanh_()", lambda t: _hardtanh(t, low, high))
    return _hardtanh(input, low, high)


def _hardtanh(x: Tensor, low: float, high: float) -> Tensor:
    """x clamped to [low, high], with PyTorch's gradient: 1 strictly inside, 0 at and beyond
    the bounds (clamp's gradient is 1 at the bounds)."""
    inside = (x._data > low) & (x._data < high)
    return where(inside, x, x.detach().clamp(low, high))


def softmin(input: Tensor, dim: Any = None, _stacklevel: int = 3, dtype: Any = None) -> Tensor:
    """softmax(-x) along `dim` (PyTorch's implicit dim, with its warning, when none is given)."""
    input, dim = _softmax_args("softmin", input, dim, None, dtype)
    return (-input).softmax(dim)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with PyTorch's self-normalising constants."""
    input = _tensor(input, "selu")
    if inplace:
        return modify(input, "selu_()", lambda t: _SELU_SCALE * t.elu(_SELU_ALPHA))
    return _SELU_SCALE * input.elu(_SELU_ALPHA)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha (exp(x / alpha) - 1), as PyTorch's (an elu whose input is
    scaled by 1 / alpha; so for a negative alpha too)."""
    input = _tensor(input, "celu")
    alpha = _number("celu", "alpha", alpha)
    if alpha == 0:
        raise ValueError("celu(): alpha cannot be 0 (it divides x)")

    def curve(x: Tensor) -> Tensor:  # (exp of x <= 0 only: no inf in the branch not taken)
        return where(x._data > 0, x, alpha * ((x.clamp(max=0) / alpha).exp() - 1))

    return modify(input, "celu_()", curve) if inplace else curve(input)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    input = _tensor(input, "mish")
    if inplace:
        return modify(input, "mish_()", lambda t: t * t.softplus(1.0, 20.0).tanh())
    return input * input.softplus(1.0, 20.0).tanh()


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6): hardtanh(x, 0, 6), with its gradient (1 strictly inside)."""
    return hardtanh(_tensor(input, "relu6"), 0.0, 6.0, inplace)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """0 for x <= -3, 1 for x >= 3, x / 6 + 1/2 between (gradient 1/6 strictly inside)."""
    input = _tensor(input, "hardsigmoid")
    _check_float(input, "hardsigmoid")

    def hard(x: Tensor) -> Tensor:
        ramp = x / 6 + 0.5
        return where(x._data <= -3, 0.0, where(x._data >= 3, 1.0, ramp))

    return modify(input, "hardsigmoid_()", hard) if inplace else hard(input)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """0 for x <= -3, x for x >= 3, x (x + 3) / 6 between (gradient (2x + 3) / 6 strictly
    inside; 0 at -3 and 1 at 3, as PyTorch's)."""
    input = _tensor(input, "hardswish")
    _check_float(input, "hardswish")

    def hard(x: Tensor) -> Tensor:
        middle = x * (x + 3) / 6
        return where(x._data <= -3, 0.0, where(x._data >= 3, x, middle))

    return modify(input, "hardswish_()", hard) if inplace else hard(input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), computed without overflow."""
    input = _tensor(input, "logsigmoid")
    _check_float(input, "logsigmoid")
    return -((-input).softplus(1.0, 20.0))


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    input = _tensor(input, "softsign")
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    input = _tensor(input, "tanhshrink")
    return input - input.tanh()


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else value (gradient 1 where x > threshold, else 0)."""
    input = _tensor(input, "threshold")
    limit = _number("threshold", "threshold", threshold)
    value = _number("threshold", "value", value)
    if input._data.dtype.kind in "iu":  # (the value takes the tensor's dtype, as PyTorch's)
        value = int(value)

    def cut(x: Tensor) -> Tensor:
        return where(x._data > limit, x, value)

    return modify(input, "threshold_()", cut) if inplace else cut(input)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b), where a and b are the two halves of `input` along `dim`."""
    input = _tensor(input, "glu")
    dim = _int_dim("glu", dim)
    if input.ndim == 0:
        raise ValueError("glu(): does not take a 0-d tensor (it halves a dim)")
    size = input.shape[dim]
    if size % 2:
        raise ValueError(
            f"glu(): halving dimension must be even, but dimension {dim} is size {size} "
            f"(shape {input.shape})"
        )
    a, b = input.chunk(2, dim)
    return a * b.sigmoid()
