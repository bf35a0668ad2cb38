"""Parameter initialisation in place, as `torch.nn.init`: `normal_`, `trunc_normal_`,
`xavier_uniform_`, `kaiming_normal_`, `orthogonal_`, `eye_`, `zeros_`...

Each function overwrites a tensor's values (never its shape or dtype) and returns the tensor,
with PyTorch's signatures and checks. The write is an in-place copy under `no_grad`, so a view
is written through to the tensor it views (`nn.init.zeros_(w[0])` zeroes a row of `w`) and the
tensor's version goes up, as PyTorch's. Random draws come from the global generator
(`ta.manual_seed`) or the `generator` passed. Nothing here is recorded in a graph: as in
PyTorch, initialisation is not part of what is differentiated.
"""

from __future__ import annotations

import math
import statistics
import warnings
from typing import Any

import numpy as np

from ..random import numpy_generator
from ..state import no_grad
from ..tensor import Tensor

__all__ = [
    "calculate_gain",
    "constant_",
    "dirac_",
    "eye_",
    "kaiming_normal_",
    "kaiming_uniform_",
    "normal_",
    "ones_",
    "orthogonal_",
    "sparse_",
    "trunc_normal_",
    "uniform_",
    "xavier_normal_",
    "xavier_uniform_",
    "zeros_",
]

_LINEAR = (
    "linear",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "sigmoid",
)


def _check(tensor: Any, fn: str, floats: bool = True) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"nn.init.{fn}: expected a Tensor, got {type(tensor).__name__}")
    if floats and tensor.dtype.kind != "f":
        raise TypeError(f"nn.init.{fn}: expected a float tensor, got dtype {tensor.dtype}")


def _write(tensor: Tensor, values: np.ndarray | float) -> Tensor:
    """Copy `values` into `tensor` in place, outside the graph (through a view to its base)."""
    with no_grad():
        tensor.copy_(np.asarray(values, dtype=tensor.dtype))
    return tensor


def _draw(tensor: Tensor, fn: str, generator: Any, sample: Any) -> Tensor:
    """`sample(rng, shape)` written into the float `tensor`."""
    _check(tensor, fn)
    return _write(tensor, sample(numpy_generator(generator, f"nn.init.{fn}"), tensor.shape))


def _no_elements(tensor: Tensor) -> bool:
    if tensor.numel() == 0:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=3)
        return True
    return False


def _fans(tensor: Tensor, fn: str) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel), as PyTorch computes them."""
    if tensor.ndim < 2:
        raise ValueError(
            f"nn.init.{fn}: fan in and fan out can not be computed for a tensor with fewer than "
            f"2 dimensions, got shape {tensor.shape}"
        )
    receptive = int(np.prod(tensor.shape[2:], dtype=np.int64))
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for an activation (PyTorch's table)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"nn.init.calculate_gain: negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"nn.init.calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from U(a, b)."""
    return _draw(tensor, "uniform_", generator, lambda rng, shape: rng.uniform(a, b, shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Any = None) -> Tensor:
    """Fill with draws from N(mean, std^2)."""
    return _draw(tensor, "normal_", generator, lambda rng, shape: rng.normal(mean, std, shape))


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: Any = None,
) -> Tensor:
    """Fill with draws from N(mean, std^2) truncated to [a, b] (`a` and `b` are values, not
    multiples of std), as PyTorch's: every value lies in [a, b]. PyTorch warns when the mean is
    more than 2 std outside [a, b]; so does this.

    The distribution is PyTorch's (the normal, conditioned on [a, b]); the draws are made by
    redrawing the values that fall outside, or, when [a, b] holds under 5% of the normal's
    mass, by the inverse CDF of uniform draws between the CDF values of a and b (PyTorch's way).
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of "
            "values may be incorrect.",
            UserWarning,
            stacklevel=2,
        )

    def sample(rng: np.random.Generator, shape: tuple) -> np.ndarray:
        unit = statistics.NormalDist(mean, std)
        low, high = unit.cdf(a), unit.cdf(b)
        if high - low < 0.05:  # rarely inside: the inverse CDF, element by element
            draws = rng.uniform(low, high, shape)
            values = np.vectorize(lambda p: unit.inv_cdf(min(max(p, 1e-300), 1 - 1e-16)))
            return np.clip(values(draws) if draws.size else draws, a, b)
        values = rng.normal(mean, std, shape)
        outside = (values < a) | (values > b)
        while outside.any():
            values[outside] = rng.normal(mean, std, int(outside.sum()))
            outside = (values < a) | (values > b)
        return values

    return _draw(tensor, "trunc_normal_", generator, sample)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    _check(tensor, "constant_", floats=False)
    return _write(tensor, val)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    _check(tensor, "zeros_", floats=False)
    return _write(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    _check(tensor, "ones_", floats=False)
    return _write(tensor, 1)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity (ones on the diagonal, zeros elsewhere)."""
    _check(tensor, "eye_", floats=False)
    if tensor.ndim != 2:
        raise ValueError(
            f"nn.init.eye_: only tensors with 2 dimensions are supported, got {tensor.shape}"
        )
    return _write(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D (convolution) weight with the Dirac delta: each output channel (of
    each of `groups` groups) passes its input channel through unchanged."""
    _check(tensor, "dirac_", floats=False)
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(
            f"nn.init.dirac_: only tensors with 3, 4, or 5 dimensions are supported, got "
            f"{tensor.shape}"
        )
    if tensor.shape[0] % groups:
        raise ValueError(f"nn.init.dirac_: dim 0 ({tensor.shape[0]}) must be divisible by groups")
    per_group = tensor.shape[0] // groups
    values = np.zeros(tensor.shape)
    centre = tuple(n // 2 for n in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d, *centre)] = 1
    return _write(tensor, values)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot)."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Any = None) -> Tensor:
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    std = gain * math.sqrt(2.0 / (fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str, fn: str) -> float:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init.{fn}: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _fans(tensor, fn)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """U(-b, b) with b = gain * sqrt(3 / fan) (He); PyTorch's defaults."""
    _check(tensor, "kaiming_uniform_")
    if _no_elements(tensor):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0,
    mode: str = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: Any = None,
) -> Tensor:
    """N(0, std^2) with std = gain / sqrt(fan) (He); PyTorch's defaults."""
    _check(tensor, "kaiming_normal_")
    if _no_elements(tensor):
        return tensor
    std = _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_")
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator: Any = None) -> Tensor:
    """A (semi-)orthogonal matrix times `gain`: the tensor seen as (rows, everything else) has
    orthonormal rows or columns (whichever are fewer), from the QR decomposition of normal
    draws, signs fixed so that the distribution is uniform (as PyTorch)."""
    _check(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError(
            f"nn.init.orthogonal_: only tensors with 2 or more dimensions are supported, got "
            f"{tensor.shape}"
        )
    if _no_elements(tensor):
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    draws = numpy_generator(generator, "nn.init.orthogonal_").normal(0.0, 1.0, (rows, cols))
    tall = draws if rows >= cols else draws.T  # (big, small)
    q, r = np.linalg.qr(tall)  # q: (big, small), orthonormal columns
    q *= np.sign(np.diag(r))  # (a column flipped where R's diagonal is negative)
    q = q if rows >= cols else q.T  # (rows, cols)
    return _write(tensor, gain * q.reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator: Any = None) -> Tensor:
    """A 2-D tensor drawn from N(0, std^2) with, in each column, ceil(sparsity * rows) randomly
    chosen elements set to zero."""
    _check(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError(
            f"nn.init.sparse_: only tensors with 2 dimensions are supported, got {tensor.shape}"
        )
    rng = numpy_generator(generator, "nn.init.sparse_")
    rows, cols = tensor.shape
    values = rng.normal(0.0, std, (rows, cols))
    zeros = int(math.ceil(sparsity * rows))
    for col in range(cols):
        values[rng.permutation(rows)[:zeros], col] = 0
    return _write(tensor, values)


# PyTorch's deprecated names without the underscore: each warns as PyTorch's does, then is the
# in-place function (old tutorials call `nn.init.xavier_uniform(w)`).
def _deprecated(function: Any) -> Any:
    name = function.__name__[:-1]

    def old_name(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(
            f"`nn.init.{name}` is now deprecated in favor of `nn.init.{function.__name__}`.",
            FutureWarning,
            stacklevel=2,
        )
        return function(*args, **kwargs)

    old_name.__name__ = old_name.__qualname__ = name
    old_name.__doc__ = f"Deprecated: `{function.__name__}`, with PyTorch's FutureWarning."
    return old_name


uniform = _deprecated(uniform_)
normal = _deprecated(normal_)
constant = _deprecated(constant_)
eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
xavier_uniform = _deprecated(xavier_uniform_)
xavier_normal = _deprecated(xavier_normal_)
kaiming_uniform = _deprecated(kaiming_uniform_)
kaiming_normal = _deprecated(kaiming_normal_)
orthogonal = _deprecated(orthogonal_)
sparse = _deprecated(sparse_)
