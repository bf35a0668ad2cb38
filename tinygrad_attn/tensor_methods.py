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
from .dtypes import operands


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
    raise ValueError(
        f"device {value!r}: tinygrad_attn runs on NumPy, on the CPU only. Pass device='cpu' "
        "(or leave it out)."
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
    def add(self, other: Any) -> Any:
        return self + other

    def sub(self, other: Any) -> Any:
        return self - other

    def mul(self, other: Any) -> Any:
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

    def to(self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False) -> Any:
        """`to(dtype)`, `to("cpu")`, `to(other_tensor)`: a cast when the dtype changes, else
        self (a copy with `copy=True`)."""
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
        return self * self

    def reciprocal(self) -> Any:
        return 1 / self

    def rsqrt(self) -> Any:
        return 1 / self.sqrt()

    def sign(self) -> Any:
        """-1, 0 or 1 (no gradient flows: the derivative is 0 almost everywhere)."""
        return type(self)._make(np.sign(self._data))

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Limit to [min, max]; the gradient passes where min <= x <= max (PyTorch)."""

        if min is None and max is None:
            raise ValueError("clamp(): give min, max or both")
        return ops.Clip.apply(self, low=min, high=max)

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
        return self.matmul(other)

    def bmm(self, other: Any) -> Any:
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
