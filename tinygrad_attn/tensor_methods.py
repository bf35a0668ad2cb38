"""PyTorch's spellings on Tensor: `view`, `permute`, `size()`, `dim()`, `split`, `clamp`, ...

`Tensor` inherits `TensorMethods`, so these are ordinary methods ("go to definition" lands
here). Each is one short method: an op (`ops.Flip.apply(self, ...)`) or a composite of Tensor ops
whose gradient is the chain rule. Where PyTorch and NumPy give one name two meanings, the rule
is in the README's "Coming from PyTorch" section; the short form:

- `t.size` is NumPy's element count (an int) that can also be called as PyTorch's
  `t.size()` (the shape) or `t.size(d)` (one axis length).
- `t.transpose(a, b)` with exactly two ints swaps those axes (PyTorch); a full permutation is
  one tuple (`t.transpose((0, 2, 1))`) or three or more ints; no argument reverses the axes.
- `t.max(d)` / `t.max(dim=d)` give PyTorch's `(values, indices)`; `t.max(axis=d)` and
  `t.max()` give the NumPy reduction; `t.max(other_tensor)` is `maximum`. The same for `min`.
- `t.repeat(...)` tiles the whole tensor (PyTorch), unlike NumPy's element-wise `repeat`.

As in `tensor.py`, the ops are looked up through the `ops` package when a method runs (the
import cycle closes at the end of function.py). This module must not hold derivative code
(that lives in `ops/`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import numpy_protocol, ops, versions
from .dtypes import operands, result_type
from .errors import DeviceError, NotForDTypeError, ShapeError


class device:  # noqa: N801  (PyTorch's spelling: `torch.device("cpu")`)
    """Where a tensor lives. Only the CPU exists here; any other device is a ValueError."""

    def __init__(self, type: Any = "cpu") -> None:  # noqa: A002
        self.type = check_device(type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (device, str)) and str(other).split(":")[0] == self.type

    def __hash__(self) -> int:
        return hash(self.type)

    def __str__(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"device(type={self.type!r})"


_Device = device  # (inside `to`, the argument named `device` hides the class)


def check_device(value: Any) -> str:
    """'cpu' for None, "cpu", "cpu:0" or a cpu `device`; otherwise a ValueError."""
    if value is None:
        return "cpu"
    text = value.type if isinstance(value, device) else value
    if isinstance(text, str) and text.split(":")[0] == "cpu":
        return "cpu"
    raise DeviceError(
        f"device {value!r}: tinygrad_attn runs on NumPy, on the CPU only (as a PyTorch without "
        "CUDA: ta.cuda.is_available() is False). Pass device='cpu' or leave it out; ported "
        "code that picks 'cuda' if torch.cuda.is_available() picks 'cpu' here."
    )


class Size(int):
    """`t.size`: NumPy's number of elements (an int), callable as PyTorch's `t.size()`.

    `t.size == 6` and `t.size * 2` behave as NumPy's int; `t.size()` is the shape tuple and
    `t.size(d)` the length of axis d, as PyTorch.
    """

    shape: tuple

    def __new__(cls, shape: tuple) -> Size:
        out = super().__new__(cls, int(np.prod(shape, dtype=np.int64)))
        out.shape = tuple(shape)
        return out

    def __call__(self, dim: int | None = None) -> tuple | int:
        if dim is None:
            return self.shape
        if not isinstance(dim, (int, np.integer)) or not -len(self.shape) <= dim < len(self.shape):
            raise ValueError(
                f"size({dim!r}): no such axis in shape {self.shape} (axes {-len(self.shape)} "
                f"to {len(self.shape) - 1})"
            )
        return self.shape[dim]


def resolve_axis(
    fn: str, axis: Any, keepdims: Any, dim: Any = None, keepdim: Any = None
) -> tuple[Any, bool]:
    """(axis, keepdims) from NumPy's or PyTorch's spelling; both at once is a TypeError."""
    if dim is not None:
        if axis is not None:
            raise TypeError(f"{fn}(): pass axis= or dim=, not both (they mean the same)")
        axis = dim
    if keepdim is not None:
        if keepdims is not None and keepdims is not False:
            raise TypeError(f"{fn}(): pass keepdims= or keepdim=, not both")
        keepdims = keepdim
    return axis, bool(keepdims)


class TensorMethods:
    """The PyTorch-style methods of `Tensor` (see the module docstring for the rules)."""

    __slots__ = ()

    # ------------------------------------------------------- autograd, PyTorch's extras
    @property
    def _version(self) -> int:
        """How many in-place writes this tensor's memory has had (as PyTorch's)."""
        return versions.version(self._data)

    def detach_(self) -> Any:
        """Make this tensor a leaf that takes no gradient, in place."""
        if self._base is not None and self._view_chain is not None and self.requires_grad:
            raise RuntimeError(
                "detach_(): this tensor is a view of another that requires grad; use "
                "detach() to get a new tensor instead"
            )
        self.grad_fn, self.requires_grad = None, False
        return self

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf that called `retain_grad()`."""
        return self.grad_fn is not None and self.grad_fn.retains_output_grad

    # PyTorch's method spellings of the operators
    def add(self, other: Any, *, alpha: Any = 1) -> Any:
        """self + alpha * other."""
        return self + (other if alpha == 1 else other * alpha)

    def sub(self, other: Any, *, alpha: Any = 1) -> Any:
        """self - alpha * other."""
        return self - (other if alpha == 1 else other * alpha)

    def subtract(self, other: Any, *, alpha: Any = 1) -> Any:
        return self.sub(other, alpha=alpha)

    def mul(self, other: Any) -> Any:
        return self * other

    def multiply(self, other: Any) -> Any:
        return self * other

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        """self / other; rounding_mode "floor" (as `//`) or "trunc" rounds the quotient."""
        if rounding_mode is None:
            return self / other
        return ops.DivRounded.apply(*operands(self, other), mode=rounding_mode)

    def divide(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        return self.div(other, rounding_mode=rounding_mode)

    def true_divide(self, other: Any) -> Any:
        return self / other

    def floor_divide(self, other: Any) -> Any:
        return ops.DivRounded.apply(*operands(self, other), mode="floor")

    def __floordiv__(self, other: Any) -> Any:
        return ops.DivRounded.apply(*operands(self, other), mode="floor")

    def __rfloordiv__(self, other: Any) -> Any:
        return ops.DivRounded.apply(*operands(other, self), mode="floor")

    def remainder(self, other: Any) -> Any:
        return ops.Remainder.apply(*operands(self, other))

    def __mod__(self, other: Any) -> Any:
        return ops.Remainder.apply(*operands(self, other))

    def __rmod__(self, other: Any) -> Any:
        return ops.Remainder.apply(*operands(other, self))

    def pow(self, exponent: Any) -> Any:
        return self**exponent

    # ----------------------------------------- comparisons, logic, bits (bool results, no grad)
    def eq(self, other: Any) -> Any:  # (None, a string: refused, where `==` says False)
        return self._make(ops.arithmetic.compare("eq", np.equal, self._data, other))

    def ne(self, other: Any) -> Any:
        return self._make(ops.arithmetic.compare("ne", np.not_equal, self._data, other))

    def lt(self, other: Any) -> Any:
        return self < other

    def le(self, other: Any) -> Any:
        return self <= other

    def gt(self, other: Any) -> Any:
        return self > other

    def ge(self, other: Any) -> Any:
        return self >= other

    not_equal, less, less_equal, greater, greater_equal = ne, lt, le, gt, ge

    def equal(self, other: Any) -> bool:
        """True if both have the same shape and elements (a Python bool, as PyTorch)."""
        b = np.asarray(getattr(other, "_data", other))
        return self._data.shape == b.shape and bool(np.all(self._data == b))

    def allclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan=False):
        """|self - other| <= atol + rtol * |other| everywhere (a Python bool)."""
        b = np.asarray(getattr(other, "_data", other))
        return bool(np.allclose(self._data, b, rtol=rtol, atol=atol, equal_nan=equal_nan))

    def isclose(self, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan=False):
        b = np.asarray(getattr(other, "_data", other))
        return type(self)._make(
            np.isclose(self._data, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
        )

    def isnan(self) -> Any:
        return type(self)._make(np.isnan(self._data))

    def isinf(self) -> Any:
        return type(self)._make(np.isinf(self._data))

    def isfinite(self) -> Any:
        return type(self)._make(np.isfinite(self._data))

    def isposinf(self) -> Any:
        return type(self)._make(np.isposinf(self._data))

    def isneginf(self) -> Any:
        return type(self)._make(np.isneginf(self._data))

    def logical_not(self) -> Any:
        return type(self)._make(np.logical_not(self._data))

    def logical_and(self, other: Any) -> Any:
        return _logic(np.logical_and, self, other)

    def logical_or(self, other: Any) -> Any:
        return _logic(np.logical_or, self, other)

    def logical_xor(self, other: Any) -> Any:
        return _logic(np.logical_xor, self, other)

    def bitwise_and(self, other: Any) -> Any:
        return _bits("&", np.bitwise_and, self, other)

    def bitwise_or(self, other: Any) -> Any:
        return _bits("|", np.bitwise_or, self, other)

    def bitwise_xor(self, other: Any) -> Any:
        return _bits("^", np.bitwise_xor, self, other)

    def bitwise_not(self) -> Any:
        _check_bits("~", self._data.dtype)
        return type(self)._make(np.invert(self._data))

    __and__, __or__, __xor__, __invert__ = bitwise_and, bitwise_or, bitwise_xor, bitwise_not

    def __rand__(self, other: Any) -> Any:
        return _bits("&", np.bitwise_and, self, other)

    def __ror__(self, other: Any) -> Any:
        return _bits("|", np.bitwise_or, self, other)

    def __rxor__(self, other: Any) -> Any:
        return _bits("^", np.bitwise_xor, self, other)

    def where(self, condition: Any, other: Any) -> Any:
        """self where `condition`, else `other` (PyTorch's method form of torch.where)."""
        from .creation import where  # (creation imports the tensor: read when called)

        return where(condition, self, other)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        """The indices of the non-zero elements: an (N, ndim) int64 tensor, or with
        `as_tuple=True` one 1-D tensor per dim (NumPy's form)."""
        found = np.nonzero(np.atleast_1d(self._data))
        if as_tuple:
            return tuple(type(self)._make(i.astype(np.int64)) for i in found)
        if self._data.ndim == 0:  # (one index of no numbers if the value is non-zero)
            return type(self)._make(np.zeros((len(found[0]), 0), np.int64))
        stacked = np.stack(found, axis=-1) if found else np.zeros((0, 0))
        return type(self)._make(stacked.astype(np.int64).reshape(-1, self._data.ndim))

    def argwhere(self) -> Any:
        return self.nonzero()

    # ------------------------------------------------------- rounding, sign (gradient 0)
    def sign(self) -> Any:
        """-1, 0 or 1 (a bool tensor's sign is itself); its gradient is 0 (PyTorch's)."""
        if self._data.dtype.kind == "b":
            return type(self)._make(self._data.copy())
        return ops.Sign.apply(self)

    def sgn(self) -> Any:
        return self.sign()

    def floor(self) -> Any:
        return ops.Round.apply(self, mode="floor")

    def ceil(self) -> Any:
        return ops.Round.apply(self, mode="ceil")

    def trunc(self) -> Any:
        return ops.Round.apply(self, mode="trunc")

    def round(self, decimals: int = 0) -> Any:
        """To `decimals` places, halves to even (as PyTorch and NumPy); gradient 0."""
        return ops.Round.apply(self, mode="round", decimals=decimals)

    def frac(self) -> Any:
        return self - self.trunc()

    # ------------------------------------------------------------------- size, device
    @property
    def size(self) -> Size:
        """The element count (an int, NumPy), callable as `size()` / `size(d)` (PyTorch)."""
        return Size(self._data.shape)

    def numel(self) -> int:
        """The number of elements."""
        return int(self._data.size)

    def nelement(self) -> int:
        return int(self._data.size)

    def dim(self) -> int:
        """The number of axes (PyTorch's name for `ndim`)."""
        return self._data.ndim

    @property
    def device(self) -> device:
        """Always `device(type='cpu')`."""
        return device("cpu")

    def cpu(self) -> Any:
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> Any:
        check_device("cuda")

    def pin_memory(self) -> Any:
        return self

    def to(
        self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False,
        non_blocking: bool = False, memory_format: Any = None,
    ) -> Any:  # fmt: skip
        """`to(dtype)`, `to("cpu")`, `to(other_tensor)`: a cast when the dtype changes, else
        self (a copy with `copy=True`); `non_blocking` changes nothing on the CPU."""
        for arg in args:
            if isinstance(arg, TensorMethods):
                dtype = arg.dtype
            elif isinstance(arg, (str, _Device)) and not _is_dtype_name(arg):
                device = arg
            else:
                dtype = arg
        check_device(device)
        if dtype is None or np.dtype(dtype) == self._data.dtype:
            return self.clone() if copy else self
        return self.astype(dtype)

    def astype(self, dtype: Any) -> Any:
        """This tensor converted to `dtype`; float to float keeps the gradient (op `Cast`),
        a cast to an integer or bool dtype gives a tensor outside the graph."""
        dtype = np.dtype(dtype)
        if dtype == self._data.dtype:
            return self
        if dtype.kind != "f":
            return type(self)._make(self._data.astype(dtype))
        return ops.Cast.apply(self, dtype=dtype)

    def float(self) -> Any:
        return self.astype(np.float32)

    def double(self) -> Any:
        return self.astype(np.float64)

    def half(self) -> Any:
        return self.astype(np.float16)

    def long(self) -> Any:
        return self.astype(np.int64)

    def int(self) -> Any:
        return self.astype(np.int32)

    def bool(self) -> Any:
        return self.astype(np.bool_)

    def byte(self) -> Any:
        return self.astype(np.uint8)

    def char(self) -> Any:
        return self.astype(np.int8)

    def short(self) -> Any:
        return self.astype(np.int16)

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        """Without a dtype, PyTorch's type name ("torch.FloatTensor"); with one, the tensor
        converted to it (a dtype, or a name such as "torch.LongTensor")."""
        if dtype is None:
            return _TYPE_NAMES.get(self._data.dtype, f"torch.{self._data.dtype}Tensor")
        if isinstance(dtype, str) and dtype in _TYPE_DTYPES:
            dtype = _TYPE_DTYPES[dtype]
        return self.to(dtype)

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def is_complex(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return self._data.dtype.kind in "fi"

    def element_size(self) -> int:
        return self._data.itemsize

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def is_cuda(self) -> bool:
        return False

    def type_as(self, other: Any) -> Any:
        return self.astype(other.dtype)

    def clone(self) -> Any:
        """A copy with its own array that stays in the graph (gradient passes through)."""
        return ops.Clone.apply(self)

    def contiguous(self, memory_format: Any = None) -> Any:
        """Self if its memory is laid out row by row (C order), else a copy that is (in the
        graph, as `clone`)."""
        return self if self._data.flags.c_contiguous else ops.Clone.apply(self)

    def is_contiguous(self, memory_format: Any = None) -> bool:
        return bool(self._data.flags.c_contiguous)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __abs__(self) -> Any:
        return self.abs()

    def tolist(self) -> Any:
        return self._data.tolist()

    # ------------------------------------------------------------------- elementwise
    def sin(self) -> Any:

        return ops.Sin.apply(self)

    def cos(self) -> Any:

        return ops.Cos.apply(self)

    def log1p(self) -> Any:
        return ops.Log1p.apply(self)

    def expm1(self) -> Any:
        return ops.Expm1.apply(self)

    def log2(self) -> Any:
        return self.log() * (1 / np.log(2.0))

    def square(self) -> Any:
        if self._data.dtype.kind == "b":  # (PyTorch: pow(x, 2), an int64 result)
            whole = self.long()
            return whole * whole
        return self * self

    def reciprocal(self) -> Any:
        return 1 / self

    def rsqrt(self) -> Any:
        return 1 / self.sqrt()

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Limit to [min, max] (numbers or tensors, broadcast); the gradient passes where
        min <= x <= max, and to a tensor bound where it was taken; min above max gives max
        (PyTorch)."""
        if min is None and max is None:
            raise ValueError("clamp(): give min, max or both")
        dtype = result_type(self, min, max)  # (an int tensor clamped at 1.5 is float, PyTorch)
        if dtype != self._data.dtype:
            self = self.to(dtype)
        if isinstance(min, TensorMethods) or isinstance(max, TensorMethods):
            from .creation import where  # (creation imports the tensor: read when called)

            out = self
            if min is not None:
                out = where(out < min, min, out)
            if max is not None:
                out = where(out > max, max, out)
            return out
        for bound in (min, max):
            if bound is not None and not isinstance(bound, (int, float, np.number)):
                raise TypeError(f"clamp(): min and max must be numbers or tensors, got {bound!r}")
        return ops.Clip.apply(self, low=min, high=max)

    def clamp_min(self, min: Any) -> Any:  # noqa: A002
        return self.clamp(min=min)

    def clamp_max(self, max: Any) -> Any:  # noqa: A002
        return self.clamp(max=max)

    def clip(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        return self.clamp(min, max)

    def maximum(self, other: Any) -> Any:
        """Elementwise max; where both are equal the gradient is split evenly (PyTorch)."""

        return ops.Maximum.apply(*operands(self, other))

    def minimum(self, other: Any) -> Any:
        """Elementwise min; where both are equal the gradient is split evenly (PyTorch)."""

        return ops.Minimum.apply(*operands(self, other))

    def leaky_relu(self, negative_slope: float = 0.01) -> Any:

        return ops.LeakyRelu.apply(self, slope=negative_slope)

    def elu(self, alpha: float = 1.0) -> Any:

        return ops.Elu.apply(self, alpha=alpha)

    def softplus(self, beta: float = 1.0, threshold: float = 20.0) -> Any:

        return ops.Softplus.apply(self, beta=beta, threshold=threshold)

    def silu(self) -> Any:
        return self * self.sigmoid()

    def hardtanh(self, min_val: float = -1.0, max_val: float = 1.0) -> Any:
        return self.clamp(min_val, max_val)

    def mm(self, other: Any) -> Any:
        """The product of two matrices (2-D each, as PyTorch's; `matmul` takes any rank)."""
        _check_ranks("mm", 2, "a matrix", self, other)
        return self.matmul(other)

    def bmm(self, other: Any) -> Any:
        """Batched matrix products of two 3-D tensors (as PyTorch's; `matmul` broadcasts)."""
        _check_ranks("bmm", 3, "a 3-D batch of matrices", self, other)
        return self.matmul(other)

    # ------------------------------------------------------------ NumPy protocols
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any):
        """`np.exp(t)`, `np.maximum(t, 0)`, `ndarray + t` record the same op as the Tensor
        method; a ufunc with no Tensor counterpart refuses a tensor that requires grad."""
        return numpy_protocol.apply_ufunc(self, ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any):
        """`np.sum(t, axis=0)`, `np.concatenate([t, u])`, ... call the Tensor's op; other
        NumPy functions run on the data unless that would drop a gradient (TypeError)."""
        return numpy_protocol.apply_function(func, args, kwargs)


_TYPE_NAMES = {
    np.dtype(np.float32): "torch.FloatTensor",
    np.dtype(np.float64): "torch.DoubleTensor",
    np.dtype(np.float16): "torch.HalfTensor",
    np.dtype(np.int64): "torch.LongTensor",
    np.dtype(np.int32): "torch.IntTensor",
    np.dtype(np.int16): "torch.ShortTensor",
    np.dtype(np.int8): "torch.CharTensor",
    np.dtype(np.uint8): "torch.ByteTensor",
    np.dtype(np.bool_): "torch.BoolTensor",
}
_TYPE_DTYPES = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _logic(fn: Any, a: Any, b: Any) -> Any:
    """A logical op of two tensors (or numbers): a bool tensor, outside the graph."""
    return type(a)._make(np.asarray(fn(a._data, np.asarray(getattr(b, "_data", b)))))


def _check_bits(symbol: str, dtype: np.dtype) -> None:
    if dtype.kind not in "iub":
        raise NotForDTypeError(
            f"{symbol}: bitwise operations take bool or integer tensors, not {dtype} ones (as "
            "PyTorch); for masks compare first (x > 0) & (y > 0), or use logical_and"
        )


def _bits(symbol: str, fn: Any, a: Any, b: Any) -> Any:
    """`a & b`, `a | b`, `a ^ b` of bool or integer tensors, as PyTorch (promoted dtypes)."""
    from .dtypes import result_type

    dtype = result_type(a, b)
    _check_bits(symbol, dtype)
    other = np.asarray(getattr(b, "_data", b))
    _check_bits(symbol, other.dtype)
    _check_bits(symbol, a._data.dtype)
    return type(a)._make(np.asarray(fn(a._data, other)).astype(dtype, copy=False))


def _is_dtype_name(value: Any) -> bool:
    if isinstance(value, device):
        return False
    try:
        np.dtype(value)
    except TypeError:
        return False
    return True


def softmax_over_axes(tensor: Any, axes: Any, log: bool) -> Any:
    """(log-)softmax over several axes at once: those axes moved last and merged into one, the
    one-axis op, then the shape put back (a composite: its gradient is the chain rule)."""
    ndim = tensor._data.ndim
    chosen = sorted({int(a) % max(ndim, 1) for a in axes})
    if not chosen or any(not -ndim <= a < ndim for a in axes):
        raise ValueError(f"softmax: axes {tuple(axes)} are not axes of shape {tensor.shape}")
    kept = [a for a in range(ndim) if a not in chosen]
    moved = tensor.transpose(tuple(kept + chosen))  # (kept..., chosen...)
    merged = moved.reshape(*moved.shape[: len(kept)], -1)  # (kept..., N)
    out = merged.log_softmax(-1) if log else merged.softmax(-1)
    return out.reshape(moved.shape).transpose(tuple(int(i) for i in np.argsort(kept + chosen)))


def _check_ranks(op: str, ndim: int, what: str, a: Any, b: Any) -> None:
    """`mm` and `bmm` take exactly `ndim`-D operands: another rank is a ShapeError, not NumPy's
    matmul of it (a 1-D `mm` would silently be a dot product)."""
    for name, t in (("self", a), ("mat2", b)):
        shape = np.shape(getattr(t, "_data", t))
        if len(shape) != ndim:
            raise ShapeError(
                f"{op}: {name} must be {what} ({ndim}-D), got shape {tuple(shape)}; "
                "use matmul (or @) for other ranks"
            )
