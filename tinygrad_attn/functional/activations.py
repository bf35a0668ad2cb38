"""Activation functions, as `torch.nn.functional`'s: softmax and log_softmax, relu, gelu (one
fused node, `gelu_composed` its steps), sigmoid, tanh, leaky_relu, elu, softplus, silu, hardtanh.

Each checks its arguments and calls one Tensor method or op; none has backward code of its own.
"""

from __future__ import annotations

import math
from typing import Any

from ..ops.layers import GELU
from ..tensor import Tensor
from ._checks import _check_float, _tensor


def softmax(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis` (or `dim`; -1 by default); the max is subtracted
    first, for stability."""
    return _tensor(x, "softmax").softmax(axis, dim=dim)


def log_softmax(x: Tensor, axis: int | None = None, *, dim: int | None = None) -> Tensor:
    """x - log(sum(exp(x))) along `axis` (or `dim`; -1 by default); use it rather than
    log(softmax(x)) for stability."""
    return _tensor(x, "log_softmax").log_softmax(axis, dim=dim)


def relu(x: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0). `inplace=True` (PyTorch's flag, here and below) computes it out of place too:
    the result is what is returned, and `x` keeps its values."""
    return _tensor(x, "relu").relu()


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


def leaky_relu(x: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    return _tensor(x, "leaky_relu").leaky_relu(negative_slope)


def elu(x: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return _tensor(x, "elu").elu(alpha)


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta (x itself past the threshold, as PyTorch)."""
    return _tensor(x, "softplus").softplus(beta, threshold)


def silu(x: Tensor) -> Tensor:
    """x * sigmoid(x)."""
    return _tensor(x, "silu").silu()


def hardtanh(x: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace=False) -> Tensor:
    """x clamped to [min_val, max_val]."""
    return _tensor(x, "hardtanh").hardtanh(min_val, max_val)
