"""Making tensors: `from_numpy`, `zeros`, `ones`, `arange`, `randn`, `concatenate`, `stack`,
`where`, and PyTorch's module-level spellings: `ta.tensor`, `zeros_like`, `full`, `cat`, `tril`,
`multinomial`, dtype names (`ta.float32`, `ta.long`) and `ta.device`.

Each is a thin function over a Tensor constructor or method, so PyTorch code that calls
`torch.cat(...)` runs with `import tinygrad_attn as torch`. No op lives here.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import ops
from .dtypes import as_constant, result_type
from .errors import DTypeError
from .random import Generator, numpy_generator
from .state import get_default_dtype, get_rng
from .tensor import Tensor, _check_can_require_grad
from .tensor_methods import Size, check_device, device
from .tensor_reduce import ValuesIndices

__all__ = [
    "Size",
    "ValuesIndices",
    "bfloat16",
    "bool",
    "cat",
    "device",
    "double",
    "float",
    "float16",
    "float32",
    "float64",
    "full",
    "full_like",
    "int32",
    "int64",
    "long",
    "multinomial",
    "ones_like",
    "rand",
    "randint",
    "randn_like",
    "tensor",
    "topk",
    "tril",
    "triu",
    "zeros_like",
    "half",
]

# dtype names as in PyTorch (NumPy dtypes: `x.dtype == ta.float32` holds).
float16 = half = np.dtype(np.float16)
float32 = float = np.dtype(np.float32)  # noqa: A001
float64 = double = np.dtype(np.float64)
int8 = np.dtype(np.int8)
int16 = short = np.dtype(np.int16)
int32 = int = np.dtype(np.int32)  # noqa: A001
uint8 = np.dtype(np.uint8)
uint16, uint32, uint64 = np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)
int64 = long = np.dtype(np.int64)
bool = np.dtype(np.bool_)  # noqa: A001


class _MissingDType:
    """A PyTorch dtype NumPy has no counterpart for. The name exists, so scripts that list the
    dtypes (`{'float32': torch.float32, 'bfloat16': torch.bfloat16}[args.dtype]`) run; using
    it as a dtype is a clear error (NumPy reads `.dtype`, which raises)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    @property
    def dtype(self) -> np.dtype:
        raise DTypeError(
            f"torch.{self.name}: NumPy has no {self.name}, so tinygrad_attn computes in "
            "float16, float32 or float64. Use torch.float32 (CPU scripts choose it when "
            "CUDA is not available)."
        )


bfloat16 = _MissingDType("bfloat16")


def from_numpy(array: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A tensor that shares `array` (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected an np.ndarray, got {type(array).__name__}")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"from_numpy: dtype {array.dtype} is not float, integer or bool")
    if requires_grad:
        _check_can_require_grad(array.dtype, "from_numpy(requires_grad=True)")
    out = Tensor._make(array)
    out.requires_grad = builtins.bool(requires_grad)
    return out


def _shape_arg(shape: tuple, fn: str) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for n in shape:
        if not isinstance(n, (builtins.int, np.integer)) or isinstance(n, builtins.bool):
            raise TypeError(f"{fn}: the shape must be non-negative ints, got {tuple(shape)}")
        if n < 0:
            raise ValueError(f"{fn}: the shape must be non-negative ints, got {tuple(shape)}")
    return tuple(shape)


def zeros(*shape: Any, requires_grad: bool = False, dtype: Any = None, device=None) -> Tensor:
    """A tensor of zeros (default float dtype unless `dtype` is given)."""
    check_device(device)
    return from_numpy(
        np.zeros(_shape_arg(shape, "zeros"), dtype or get_default_dtype()), requires_grad
    )


def ones(*shape: Any, requires_grad: bool = False, dtype: Any = None, device=None) -> Tensor:
    """A tensor of ones (default float dtype unless `dtype` is given)."""
    check_device(device)
    return from_numpy(
        np.ones(_shape_arg(shape, "ones"), dtype or get_default_dtype()), requires_grad
    )


def arange(
    *args: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False, **kw: Any
) -> Tensor:
    """`torch.arange(end)`, `arange(start, end, step)`: int64 for integer bounds, the default
    float dtype when one is a float (as PyTorch; NumPy gives float64)."""
    check_device(device)
    if kw:  # (keyword spellings: start=, end=, step=)
        args = (kw.pop("start", 0), kw.pop("end"), kw.pop("step", 1)) if "end" in kw else args
    if kw:
        raise TypeError(f"arange() got unexpected keyword argument(s) {sorted(kw)}")
    values = [getattr(a, "_data", a) for a in args]
    if dtype is None:
        floats = any(np.asarray(v).dtype.kind == "f" for v in values)
        dtype = get_default_dtype() if floats else np.int64
    return from_numpy(
        np.arange(*[np.asarray(v).item() for v in values], dtype=dtype), requires_grad
    )


def randn(
    *shape: Any,
    generator: Generator | None = None,
    requires_grad: bool = False,
    dtype: Any = None,
    device=None,
) -> Tensor:
    """Standard normal samples from `generator`, or the global generator (`ta.manual_seed`)."""
    check_device(device)
    rng = numpy_generator(generator, "randn")
    array = rng.standard_normal(_shape_arg(shape, "randn")).astype(dtype or get_default_dtype())
    return from_numpy(array, requires_grad)


def concatenate(tensors: Sequence[Any], axis: int = 0, *, dim: Any = None) -> Tensor:
    """Join tensors along an existing axis (`np.concatenate`, PyTorch's `cat`)."""
    pieces = ops.movement.tensor_sequence(tensors, "concatenate")
    return ops.Concatenate.apply(*_same_dtype(pieces), axis=axis if dim is None else dim)


def _same_dtype(pieces: tuple) -> tuple:
    """The pieces of a join in one dtype, PyTorch's promotion of them all."""
    dtypes = {getattr(p, "dtype", None) for p in pieces}
    if len(dtypes) <= 1:
        return pieces
    dtype = result_type(*pieces)
    return tuple(as_constant(p, dtype) for p in pieces)


def stack(tensors: Sequence[Any], dim: int = 0, *, axis: Any = None, out: Any = None) -> Tensor:
    """Join tensors along a new dim (`torch.stack`; `axis=` as NumPy spells it)."""
    if out is not None:
        raise TypeError("stack(out=...) is not supported; use the returned tensor")
    pieces = ops.movement.tensor_sequence(tensors, "stack")
    return ops.Stack.apply(*_same_dtype(pieces), axis=dim if axis is None else axis)


_NOTHING = object()  # (where(condition) alone: neither value given)


def where(condition: Any, a: Any = _NOTHING, b: Any = _NOTHING) -> Any:
    """`a` where `condition` is True, else `b` (broadcasting); no gradient to `condition`.
    `where(condition)` alone is `condition.nonzero(as_tuple=True)`, as PyTorch's."""
    if a is _NOTHING and b is _NOTHING:
        return as_constant(condition).nonzero(as_tuple=True)
    if a is _NOTHING or b is _NOTHING:
        raise TypeError("where(): give the condition alone, or the condition and both values")
    dtype = result_type(a, b)  # (PyTorch's promotion: where(c, 1.0, 0.0) is float32)
    condition = as_constant(condition)
    return ops.Where.apply(condition, as_constant(a, dtype), as_constant(b, dtype))


def tensor(data: Any, dtype: Any = None, device: Any = None, requires_grad: Any = False) -> Tensor:
    """`torch.tensor`: a new tensor that copies `data` (same as `Tensor(...)`)."""
    check_device(device)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype)


def _like(t: Any, dtype: Any, device: Any) -> np.dtype:
    check_device(device)
    return np.dtype(dtype) if dtype is not None else np.asarray(t).dtype


def zeros_like(t: Any, dtype: Any = None, device: Any = None, requires_grad=False) -> Tensor:
    return from_numpy(np.zeros(np.shape(t), _like(t, dtype, device)), requires_grad)


def ones_like(t: Any, dtype: Any = None, device: Any = None, requires_grad=False) -> Tensor:
    return from_numpy(np.ones(np.shape(t), _like(t, dtype, device)), requires_grad)


def full_like(t: Any, fill_value: Any, dtype: Any = None, device: Any = None) -> Tensor:
    return from_numpy(np.full(np.shape(t), fill_value, _like(t, dtype, device)))


def randn_like(t: Any, dtype: Any = None, device: Any = None, requires_grad=False) -> Tensor:
    array = get_rng().standard_normal(np.shape(t)).astype(_like(t, dtype, device))
    return from_numpy(array, requires_grad)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad=False):
    """A tensor of `size` filled with `fill_value` (a float fill takes the default dtype)."""
    check_device(device)
    if dtype is None and isinstance(fill_value, builtins.float):
        dtype = get_default_dtype()
    shape = (size,) if isinstance(size, (builtins.int, np.integer)) else tuple(size)
    return from_numpy(np.full(shape, fill_value, dtype=dtype), requires_grad)


def rand(
    *shape: Any,
    generator: Generator | None = None,
    dtype: Any = None,
    device: Any = None,
    requires_grad=False,
) -> Tensor:
    """U(0, 1) samples from `generator`, or the global generator (`ta.manual_seed`)."""
    check_device(device)
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], Sequence) else shape
    array = numpy_generator(generator, "rand").random(shape).astype(dtype or get_default_dtype())
    return from_numpy(array, requires_grad)


def randint(
    low: int,
    high: Any = None,
    size: Any = (),
    dtype: Any = None,
    device=None,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """Integers in [low, high) (or [0, low) with one bound), as `torch.randint`, from
    `generator` or the global generator (`ta.manual_seed`)."""
    check_device(device)
    if isinstance(high, (tuple, list, Size)) and size == ():  # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if low >= high:
        raise ValueError(f"randint: low ({low}) must be less than high ({high})")
    rng = numpy_generator(generator, "randint")
    shape = (size,) if isinstance(size, (builtins.int, np.integer)) else tuple(size)
    return from_numpy(rng.integers(low, high, size=shape, dtype=dtype or np.int64))


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`torch.as_tensor`: `data` itself if it is a tensor of that dtype, a tensor sharing an
    ndarray's memory when no conversion is needed, else a new tensor."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and data.dtype.kind in "fiub":
        if dtype is None or np.dtype(dtype) == data.dtype:
            return from_numpy(data)
        return from_numpy(data.astype(dtype))
    return tensor(data, dtype=dtype)


def empty_like(t: Any, dtype: Any = None, device: Any = None, requires_grad=False) -> Tensor:
    """As `zeros_like` (never uninitialised memory here)."""
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad)


def cat(tensors: Sequence[Any], dim: int = 0, *, axis: Any = None) -> Tensor:
    """`torch.cat` = `ta.concatenate`: join along an existing axis."""
    return concatenate(list(tensors), axis=dim if axis is None else axis)


def tril(t: Tensor, diagonal: int = 0) -> Tensor:
    return t.tril(diagonal)


def triu(t: Tensor, diagonal: int = 0) -> Tensor:
    return t.triu(diagonal)


def topk(t: Tensor, k: int, dim: int = -1, largest: Any = True, sorted: Any = True):  # noqa: A002
    return t.topk(k, dim, largest, sorted)


def multinomial(
    probs: Any, num_samples: int, replacement: Any = False, *, generator: Generator | None = None
) -> Tensor:
    """Draw `num_samples` class indices per row of `probs` (`(C,)` or `(B, C)`, weights that
    need not sum to 1) from `generator` or the global generator; int64, outside the graph."""
    weights = np.asarray(probs._data if isinstance(probs, Tensor) else probs, dtype=np.float64)
    if weights.ndim not in (1, 2) or (weights < 0).any() or not np.isfinite(weights).all():
        raise ValueError(
            f"multinomial: probs must be a (C,) or (B, C) array of finite weights >= 0, got "
            f"shape {weights.shape}"
        )
    rows = weights.reshape(-1, weights.shape[-1])
    if not replacement and num_samples > rows.shape[-1]:
        raise ValueError(
            f"multinomial: cannot draw {num_samples} samples from {rows.shape[-1]} classes "
            "without replacement; pass replacement=True"
        )
    rng = numpy_generator(generator, "multinomial")
    out = np.stack(
        [
            rng.choice(row.size, size=num_samples, replace=replacement, p=row / row.sum())
            for row in rows
        ]
    ).astype(np.int64)
    return from_numpy(out.reshape(*weights.shape[:-1], num_samples))
