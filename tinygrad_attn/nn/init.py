"""Parameter initialisation in place, as `torch.nn.init`: `normal_`, `zeros_`, `xavier_uniform_`...

Each function overwrites a tensor's values (never its shape or dtype) with draws from the global
generator (`ta.manual_seed`) and returns the tensor. It records nothing in a graph: as in
PyTorch, initialisation is not part of what is differentiated.
"""

from __future__ import annotations

import math

import numpy as np

from ..state import get_rng
from ..tensor import Tensor

__all__ = [
    "calculate_gain",
    "constant_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]


def _write(tensor: Tensor, values: np.ndarray | float, fn: str) -> Tensor:
    """Put `values` into `tensor` (same shape and dtype); a new array if a graph holds it."""
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{fn}: expected a Tensor, got {type(tensor).__name__}")
    if tensor.dtype.kind != "f":
        raise TypeError(f"nn.init.{fn}: expected a float tensor, got dtype {tensor.dtype}")
    if tensor._data.flags.writeable:
        tensor._data[...] = values
    else:
        tensor.data = np.broadcast_to(np.asarray(values, dtype=tensor.dtype), tensor.shape).copy()
    return tensor


def _fans(tensor: Tensor, fn: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel), as PyTorch computes them."""
    if tensor.ndim < 2:
        raise ValueError(
            f"nn.init.{fn}: fan in and fan out need a tensor with at least 2 axes, got shape "
            f"{tensor.shape}"
        )
    receptive = int(np.prod(tensor.shape[2:], dtype=np.int64))
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for an activation (PyTorch's table)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"nn.init.calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with draws from U(a, b)."""
    return _write(tensor, get_rng().uniform(a, b, tensor.shape), "uniform_")


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with draws from N(mean, std^2)."""
    return _write(tensor, get_rng().normal(mean, std, tensor.shape), "normal_")


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    return _write(tensor, val, "constant_")


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return _write(tensor, 0.0, "zeros_")


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return _write(tensor, 1.0, "ones_")


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return _write(tensor, get_rng().uniform(-bound, bound, tensor.shape), "xavier_uniform_")


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    return _write(tensor, get_rng().normal(0.0, std, tensor.shape), "xavier_normal_")


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str, fn: str) -> float:
    fan_in, fan_out = _fans(tensor, fn)
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init.{fn}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He); PyTorch's defaults."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    return _write(tensor, get_rng().uniform(-bound, bound, tensor.shape), "kaiming_uniform_")


def kaiming_normal_(
    tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu"
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    return _write(tensor, get_rng().normal(0.0, std, tensor.shape), "kaiming_normal_")
