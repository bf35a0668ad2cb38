"""Activation functions, as `torch.nn.functional`'s: softmax and log_softmax, relu, gelu (one
fused node, `gelu_composed` its steps), sigmoid, tanh, leaky_relu, elu, softplus, silu, hardtanh.

Each checks its arguments and calls one Tensor method or op; none has backward code of its own.
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
