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

from typing import Any, NamedTuple

import numpy as np

from . import numpy_protocol, ops, state


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


class ValuesIndices(NamedTuple):
    """What `max(dim)`, `min(dim)` and `topk` return, as PyTorch: `.values`, `.indices`."""

    values: Any
    indices: Any


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


def resolve_ddof(fn: str, ddof: Any, dim: Any, torch_style: dict) -> int:
    """The ddof of `var`/`std`: NumPy's default 0, or PyTorch's default correction of 1 when
    called PyTorch-style (`dim=`, `unbiased=`, `correction=`)."""
    unknown = set(torch_style) - {"unbiased", "correction"}
    if unknown:
        raise TypeError(f"{fn}() got unexpected keyword argument(s) {sorted(unknown)}")
    unbiased, correction = torch_style.get("unbiased"), torch_style.get("correction")
    if correction is not None:
        return correction
    if unbiased is not None:
        return int(bool(unbiased))
    if ddof is not None:
        return ddof
    return 1 if dim is not None else 0


class TensorMethods:
    """The PyTorch-style methods of `Tensor` (see the module docstring for the rules)."""

    __slots__ = ()

    # PyTorch's method spellings of the operators
    def add(self, other: Any) -> Any:
        return self + other

    def sub(self, other: Any) -> Any:
        return self - other

    def mul(self, other: Any) -> Any:
        return self * other

    def div(self, other: Any) -> Any:
        return self / other

    def pow(self, exponent: Any) -> Any:
        return self**exponent

    # ------------------------------------------------------------------- size, device
    @property
    def size(self) -> Size:
        """The element count (an int, NumPy), callable as `size()` / `size(d)` (PyTorch)."""
        return Size(self.data.shape)

    def numel(self) -> int:
        """The number of elements."""
        return int(self.data.size)

    def nelement(self) -> int:
        return int(self.data.size)

    def dim(self) -> int:
        """The number of axes (PyTorch's name for `ndim`)."""
        return self.data.ndim

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
        if dtype is None or np.dtype(dtype) == self.data.dtype:
            return self.clone() if copy else self
        return self.astype(dtype)

    def astype(self, dtype: Any) -> Any:
        """This tensor converted to `dtype`; float to float keeps the gradient (op `Cast`),
        a cast to an integer or bool dtype gives a tensor outside the graph."""
        dtype = np.dtype(dtype)
        if dtype == self.data.dtype:
            return self
        if dtype.kind != "f":
            return type(self)._make(self.data.astype(dtype))
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

    def contiguous(self) -> Any:
        """Self: NumPy arrays need no contiguous copy before `view` here."""
        return self

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __abs__(self) -> Any:
        return self.abs()

    def tolist(self) -> Any:
        return self.data.tolist()

    # ----------------------------------------------------------------------- shape
    def view(self, *shape: Any) -> Any:
        """`reshape` (NumPy copies when it must, so no contiguity rule applies)."""
        return self.reshape(*shape)

    def view_as(self, other: Any) -> Any:
        return self.reshape(other.shape)

    def reshape_as(self, other: Any) -> Any:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        """Merge axes start_dim..end_dim into one (all axes by default)."""
        shape = self.data.shape
        if not shape:
            return self.reshape(1)
        start, end = start_dim % len(shape), end_dim % len(shape)
        if start > end:
            raise ValueError(f"flatten({start_dim}, {end_dim}): start_dim comes after end_dim")
        return self.reshape(*shape[:start], -1, *shape[end + 1 :])

    def ravel(self) -> Any:
        return self.reshape(-1)

    def permute(self, *dims: Any) -> Any:
        """Reorder the axes: `x.permute(0, 2, 1, 3)` (a permutation of all axes)."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return self.transpose(tuple(dims))

    def t(self) -> Any:
        """Transpose of a tensor with at most 2 axes (PyTorch's `t()`)."""
        if self.data.ndim > 2:
            raise ValueError(f"t(): expects at most 2 axes, got shape {self.shape}; use mT")
        return self.transpose()

    @property
    def mT(self) -> Any:  # noqa: N802
        """The last two axes swapped."""
        return self.swapaxes(-1, -2)

    def moveaxis(self, source: Any, destination: Any) -> Any:
        """Move axes to new positions (`np.moveaxis`)."""
        ndim = self.data.ndim
        src = [source] if isinstance(source, (int, np.integer)) else list(source)
        dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
        if len(src) != len(dst):
            raise ValueError(f"moveaxis: {len(src)} source axes but {len(dst)} destinations")
        src = [s % ndim for s in src]
        perm = [axis for axis in range(ndim) if axis not in src]
        for d, s in sorted(zip((d % ndim for d in dst), src)):
            perm.insert(d, s)
        return self.transpose(tuple(perm))

    def movedim(self, source: Any, destination: Any) -> Any:
        return self.moveaxis(source, destination)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple:
        """Pieces along `dim`: of size n each (the last may be shorter), or of the listed
        sizes, as PyTorch (NumPy's `np.split` counts pieces instead: see `chunk`)."""
        length = self.data.shape[dim]
        if isinstance(split_size_or_sections, (int, np.integer)):
            size = int(split_size_or_sections)
            if size <= 0:
                raise ValueError(f"split({size}): the piece size must be positive")
            sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
        else:
            sizes = [int(s) for s in split_size_or_sections]
            if sum(sizes) != length:
                raise ValueError(
                    f"split({sizes}, dim={dim}): sizes add up to {sum(sizes)}, but the axis has "
                    f"length {length} (shape {self.shape})"
                )
        axis = dim % self.data.ndim
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * axis + (slice(start, start + size),)
            pieces.append(self[index])
            start += size
        return tuple(pieces)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """`chunks` pieces along `dim` of size ceil(length / chunks), as PyTorch."""
        length = self.data.shape[dim]
        return self.split(max(1, -(-length // chunks)), dim)

    def unbind(self, dim: int = 0) -> tuple:
        return tuple(piece.squeeze(dim) for piece in self.split(1, dim))

    def expand(self, *sizes: Any) -> Any:
        """Broadcast to a larger shape (-1 keeps an axis), as PyTorch; no copy forward."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        offset = len(sizes) - self.data.ndim
        shape = tuple(
            self.data.shape[i - offset] if s == -1 and i >= offset else s
            for i, s in enumerate(sizes)
        )
        return self.broadcast_to(shape)

    def expand_as(self, other: Any) -> Any:
        return self.broadcast_to(other.shape)

    def broadcast_to(self, shape: Any) -> Any:
        """`np.broadcast_to`; the gradient is summed back over the broadcast axes."""
        return ops.BroadcastTo.apply(self, shape=tuple(shape))

    def flip(self, *dims: Any) -> Any:
        """Reverse the order along the given axes (all axes when none are given)."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        return ops.Flip.apply(self, axes=tuple(dims) if dims else None)

    def roll(self, shifts: Any, dims: Any = None) -> Any:
        """Shift elements cyclically (`np.roll`)."""
        return ops.Roll.apply(self, shifts=shifts, axes=dims)

    def repeat(self, *sizes: Any) -> Any:
        """Tile the whole tensor `sizes` times along each axis (PyTorch; = `np.tile`)."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        return ops.Tile.apply(self, reps=tuple(int(s) for s in sizes))

    def pad(self, pad_width: Any, value: float = 0.0) -> Any:
        """Pad with a constant, NumPy's `pad_width` ((before, after) per axis, or one pair
        for all axes)."""

        return ops.Pad.apply(self, pad_width=pad_width, value=value)

    def tril(self, diagonal: int = 0) -> Any:
        """Zero above the `diagonal` (last two axes)."""
        rows, cols = self.data.shape[-2:]
        keep = np.tri(rows, cols, diagonal, dtype=np.bool_)
        return self.masked_fill(~keep, 0)

    def triu(self, diagonal: int = 0) -> Any:
        """Zero below the `diagonal` (last two axes)."""
        rows, cols = self.data.shape[-2:]
        below = np.tri(rows, cols, diagonal - 1, dtype=np.bool_)
        return self.masked_fill(below, 0)

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
        return type(self)._make(np.sign(self.data))

    def clamp(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        """Limit to [min, max]; the gradient passes where min <= x <= max (PyTorch)."""

        if min is None and max is None:
            raise ValueError("clamp(): give min, max or both")
        return ops.Clip.apply(self, low=min, high=max)

    def clip(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002
        return self.clamp(min, max)

    def maximum(self, other: Any) -> Any:
        """Elementwise max; where both are equal the gradient is split evenly (PyTorch)."""

        return ops.Maximum.apply(self, self._operand(other))

    def minimum(self, other: Any) -> Any:
        """Elementwise min; where both are equal the gradient is split evenly (PyTorch)."""

        return ops.Minimum.apply(self, self._operand(other))

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

    # -------------------------------------------------------------------- reductions
    def max(self, *args: Any, **kwargs: Any) -> Any:
        """Largest value. `max()` / `max(axis=...)` reduce (NumPy; where elements tie, the
        gradient is split evenly among them, as torch.amax does); `max(d)` / `max(dim=d)` give
        PyTorch's `(values, indices)`, the gradient going to the element the index names (the
        first of tied maxima); `max(other_tensor)` is `maximum`."""
        return _extreme(self, "max", args, kwargs)

    def var(self, axis=None, keepdims=None, ddof=None, *, dim=None, keepdim=None, **torch_style):
        """Variance, dividing by N - ddof: ddof=0 NumPy-style; called PyTorch-style (`dim=`,
        `unbiased=`, `correction=`), PyTorch's default correction of 1."""
        ddof = resolve_ddof("var", ddof, dim, torch_style)
        axis, keepdims = resolve_axis("var", axis, keepdims, dim, keepdim)
        return ops.Var.apply(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """As `max`: `min()` / `min(axis=...)` reduce (NumPy); `min(d)` / `min(dim=d)` give
        `(values, indices)` (PyTorch); `min(other_tensor)` is `minimum`."""
        return _extreme(self, "min", args, kwargs)

    def amax(self, dim: Any = None, keepdim: bool = False) -> Any:
        return self.max(axis=dim, keepdims=keepdim)

    def amin(self, dim: Any = None, keepdim: bool = False) -> Any:
        return ops.Min.apply(self, axis=dim, keepdims=keepdim)

    def argmax(
        self, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None
    ) -> Any:
        """Index of the largest value (no gradient), as an int64 tensor."""
        return _arg(self, np.argmax, resolve_axis("argmax", axis, keepdims, dim, keepdim))

    def argmin(
        self, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None
    ) -> Any:
        """Index of the smallest value (no gradient), as an int64 tensor."""
        return _arg(self, np.argmin, resolve_axis("argmin", axis, keepdims, dim, keepdim))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """The k largest (or smallest) values along `dim` and their indices, as PyTorch:
        `values` is in the graph (gradient to the picked elements), `indices` is int64."""
        length = self.data.shape[dim]
        if not 0 <= k <= length:
            raise ValueError(f"topk({k}): k must be in [0, {length}] for dim {dim} of {self.shape}")
        order = np.argsort(-self.data if largest else self.data, axis=dim, kind="stable")
        indices = np.take(order, np.arange(k), axis=dim)
        return ValuesIndices(self.gather(dim, indices), type(self)._make(indices))

    def gather(self, dim: int, index: Any) -> Any:
        """out[i][j] = self[index[i][j]][j] along `dim` (PyTorch's gather, NumPy's
        take_along_axis); repeated indices add up their gradients."""
        index = np.asarray(index.data if isinstance(index, TensorMethods) else index)
        axis = dim % self.data.ndim
        grid = list(np.ogrid[tuple(slice(n) for n in index.shape)])
        grid[axis] = index
        return self[tuple(grid)]

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        """log(sum(exp(x))) over `dim`, without overflow (F.logsumexp); gradient: softmax."""
        from .functional_more import logsumexp  # (it imports this module: read when called)

        return logsumexp(self, dim, keepdim)

    def prod(self, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims=None):
        """Product over axes; the gradient is the product of the other elements (exact at
        zeros too)."""

        axis, keepdims = resolve_axis("prod", axis, keepdims, dim, keepdim)
        return ops.Prod.apply(self, axis=axis, keepdims=keepdims)

    def cumsum(self, dim: Any = None, *, axis: Any = None) -> Any:
        """Running sum along one axis (flattened first when no axis is given, as NumPy)."""

        axis, _ = resolve_axis("cumsum", axis, None, dim)
        if axis is None:
            return ops.Cumsum.apply(self.reshape(-1), axis=0)
        return ops.Cumsum.apply(self, axis=axis)

    def std(self, axis=None, keepdims=None, ddof=None, *, dim=None, keepdim=None, **torch_style):
        """sqrt(var): ddof=0 NumPy-style, PyTorch's correction of 1 when called PyTorch-style
        (`dim=`, `unbiased=`, `correction=`), as `var`."""
        return self.var(axis, keepdims, ddof, dim=dim, keepdim=keepdim, **torch_style).sqrt()

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
        """The vector p-norm over `dim` (all by default), as torch.norm: p = 2 or "fro", any
        p > 0, inf / -inf (the largest / smallest |x|) or 0 (the count of non-zeros, gradient
        0). At the zero vector the gradient is 0, as in PyTorch."""
        if p == np.inf or p == -np.inf:
            return self.abs().amax(dim, keepdim) if p > 0 else self.abs().amin(dim, keepdim)
        if p == 0:
            count = (self != 0).astype(self.dtype).sum(dim=dim, keepdim=keepdim)
            return (self * 0).sum(dim=dim, keepdim=keepdim) + count
        if isinstance(p, str) and p != "fro":
            raise ValueError(f"norm: p={p!r} is not a vector norm; use 2 ('fro'), a number or inf")
        return ops.Norm.apply(self, p=2 if p == "fro" else p, axis=dim, keepdims=bool(keepdim))

    # ------------------------------------------------------------- item assignment
    def __setitem__(self, index: Any, value: Any) -> None:
        """`t[mask] = v`: writes into this tensor's array, as PyTorch does under `no_grad`
        or for a tensor outside the graph. Recording it in a graph is not supported: use
        `masked_fill` / `ta.where`, which are."""
        if isinstance(value, TensorMethods):
            if value.requires_grad and state.is_grad_enabled():
                raise RuntimeError(
                    "item assignment of a value that requires grad would not be recorded; use "
                    "ta.where(mask, value, t) or masked_fill instead"
                )
            value = value.data
        if state.is_grad_enabled() and self.requires_grad:
            kind = "a leaf that requires grad" if self.grad_fn is None else "a graph tensor"
            raise RuntimeError(
                f"item assignment into {kind} (shape {self.shape}) is not recorded in the "
                "graph. Inside `with ta.no_grad():` it writes the data; to keep gradients use "
                "t.masked_fill(mask, value) or ta.where(mask, value, t)."
            )
        if isinstance(index, TensorMethods):
            index = index.data
        elif isinstance(index, tuple):
            index = tuple(i.data if isinstance(i, TensorMethods) else i for i in index)
        self._write_at(index, value)  # by the in-place ops' rule (inplace.py)

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


def _extreme(tensor: Any, which: str, args: tuple, kwargs: dict) -> Any:
    """The dispatch of `max`/`min` between NumPy's reduction and PyTorch's forms."""
    op = ops.Max if which == "max" else ops.Min
    if args and isinstance(args[0], TensorMethods) or "other" in kwargs:
        other = args[0] if args else kwargs["other"]
        return tensor.maximum(other) if which == "max" else tensor.minimum(other)
    if "dim" in kwargs or (args and not isinstance(args[0], (tuple, list))):
        dim = kwargs.pop("dim", args[0] if args else None)
        keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
        if kwargs:
            raise TypeError(f"{which}(dim, keepdim): unexpected arguments {sorted(kwargs)}")
        arg = np.argmax if which == "max" else np.argmin
        if dim is None:  # (not a PyTorch form: the whole tensor, ties split as by max())
            values = op.apply(tensor, axis=None, keepdims=bool(keepdim))
            return ValuesIndices(values, _arg(tensor, arg, (None, bool(keepdim))))
        # As in PyTorch, the values are picked at the indices (the first of tied extremes, or
        # the first NaN), so the whole gradient goes to the element the index names.
        index = _arg(tensor, arg, (dim, True))
        values = tensor.gather(dim, index)
        if not keepdim:
            index, values = index.squeeze(dim), values.squeeze(dim)
        return ValuesIndices(values, index)
    axis = kwargs.pop("axis", args[0] if args else None)
    keepdims = kwargs.pop("keepdims", kwargs.pop("keepdim", False))
    if kwargs:
        raise TypeError(f"{which}(axis, keepdims): unexpected arguments {sorted(kwargs)}")
    return op.apply(tensor, axis=axis, keepdims=bool(keepdims))


def _arg(tensor: Any, fn: Any, axis_keep: tuple) -> Any:
    axis, keepdims = axis_keep
    out = fn(tensor.data, axis=axis, keepdims=keepdims)
    return type(tensor)._make(np.asarray(out, dtype=np.int64))


def softmax_over_axes(tensor: Any, axes: Any, log: bool) -> Any:
    """(log-)softmax over several axes at once: those axes moved last and merged into one, the
    one-axis op, then the shape put back (a composite: its gradient is the chain rule)."""
    ndim = tensor.data.ndim
    chosen = sorted({int(a) % max(ndim, 1) for a in axes})
    if not chosen or any(not -ndim <= a < ndim for a in axes):
        raise ValueError(f"softmax: axes {tuple(axes)} are not axes of shape {tensor.shape}")
    kept = [a for a in range(ndim) if a not in chosen]
    moved = tensor.transpose(tuple(kept + chosen))  # (kept..., chosen...)
    merged = moved.reshape(*moved.shape[: len(kept)], -1)  # (kept..., N)
    out = merged.log_softmax(-1) if log else merged.softmax(-1)
    return out.reshape(moved.shape).transpose(tuple(int(i) for i in np.argsort(kept + chosen)))
