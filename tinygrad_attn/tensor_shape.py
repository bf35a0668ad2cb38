"""The shape methods of Tensor in PyTorch's spellings: `view`, `flatten`, `permute`, `split`,
`chunk`, `unbind`, `expand`, `flip`, `roll`, `repeat`, `tril`, ...

`Tensor` inherits `ShapeMethods`. Those that PyTorch makes views (`view`, `permute`, `expand`,
`split`, `unbind`, ...) return views here too: they are built from the view ops (reshape,
transpose, indexing, broadcast), whose results share their input's memory (inplace.py).
This module must not hold derivative code (that lives in `ops/`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops
from .errors import DTypeError, ShapeError
from .tensor_reduce import check_dim


def _is_dtype_name(value: Any) -> bool:
    try:
        np.dtype(value)
    except TypeError:
        return False
    return not isinstance(value, str) or value not in ("cpu", "cuda", "mps")


class ShapeMethods:
    """The PyTorch-style shape methods of `Tensor`."""

    __slots__ = ()

    def view(self, *shape: Any) -> Any:
        """A view with another shape, sharing this tensor's memory (as PyTorch: an error where
        the strides do not allow one, e.g. after a transpose; `reshape` copies then); or, given
        a dtype, the same bytes read as that dtype (`t.view(torch.uint8)`)."""
        if len(shape) == 1 and _is_dtype_name(shape[0]) and not isinstance(shape[0], int):
            dtype = np.dtype(shape[0])
            try:
                array = self._data.view(dtype)
            except ValueError as err:
                raise RuntimeError(f"view({dtype}): {err} (tensor shape {self.shape})") from None
            out = type(self)._make(array)
            out._base, out._view_chain = (self._base if self._base is not None else self), None
            return out
        out = self.reshape(*shape)
        if out._data.size and not np.shares_memory(out._data, self._data):
            raise RuntimeError(
                f"view{shape}: a tensor of shape {self.shape} laid out with strides "
                f"{self._data.strides} (bytes) cannot be seen as shape {out.shape} without "
                "copying (a transposed or sliced tensor's axes span separate runs of memory). "
                "Use .reshape(...), which copies when it must, or .contiguous().view(...)."
            )
        return out

    def view_as(self, other: Any) -> Any:
        return self.view(other.shape)

    def reshape_as(self, other: Any) -> Any:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        """Merge dims start_dim..end_dim into one (all by default); a 0-d tensor gives (1,)."""
        shape = self._data.shape
        start = check_dim("flatten", start_dim, len(shape))
        end = check_dim("flatten", end_dim, len(shape))
        if not shape:
            return self.reshape(1)
        if start > end:
            raise ShapeError(
                f"flatten({start_dim}, {end_dim}): start_dim cannot come after end_dim"
            )
        return self.reshape(*shape[:start], -1, *shape[end + 1 :])

    def unflatten(self, dim: int, sizes: Any) -> Any:
        """Split dim `dim` into `sizes` (one may be -1)."""
        axis = check_dim("unflatten", dim, self._data.ndim)
        shape = self._data.shape
        return self.reshape(*shape[:axis], *sizes, *shape[axis + 1 :])

    def ravel(self) -> Any:
        return self.reshape(-1)

    def permute(self, *dims: Any) -> Any:
        """Reorder the dims: `x.permute(0, 2, 1, 3)` (a permutation of all dims)."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        if len(dims) != self._data.ndim:
            raise ShapeError(
                f"permute{tuple(dims)}: a tensor of shape {self.shape} has {self._data.ndim} "
                "dims; the number of dims in the permutation must match"
            )
        return ops.Transpose.apply(self, axes=tuple(dims))

    def t(self) -> Any:
        """Transpose of a tensor with at most 2 dims (PyTorch's `t()`)."""
        if self._data.ndim > 2:
            raise ShapeError(
                f"t(): expects a tensor with <= 2 dims, got shape {self.shape}; use mT"
            )
        return ops.Transpose.apply(self, axes=None)

    @property
    def mT(self) -> Any:  # noqa: N802
        """The last two dims swapped."""
        return self.swapaxes(-1, -2)

    def swapdims(self, dim0: int, dim1: int) -> Any:
        return self.swapaxes(dim0, dim1)

    def moveaxis(self, source: Any, destination: Any) -> Any:
        """Move dims to new positions (PyTorch's movedim, NumPy's moveaxis)."""
        ndim = self._data.ndim
        src = [source] if isinstance(source, (int, np.integer)) else list(source)
        dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
        if len(src) != len(dst):
            raise ShapeError(f"movedim: {len(src)} source dims but {len(dst)} destinations")
        src = [check_dim("movedim", s, ndim) for s in src]
        dst = [check_dim("movedim", d, ndim) for d in dst]
        if len(set(src)) != len(src) or len(set(dst)) != len(dst):
            raise ShapeError(f"movedim: repeated dim in source {source} or destination")
        if ndim == 0:  # (dim 0 / -1 of a 0-d tensor: nothing to move)
            return ops.Reshape.apply(self, shape=())
        perm = [axis for axis in range(ndim) if axis not in src]
        for d, s in sorted(zip(dst, src)):
            perm.insert(d, s)
        return ops.Transpose.apply(self, axes=tuple(perm))

    def movedim(self, source: Any, destination: Any) -> Any:
        return self.moveaxis(source, destination)

    def narrow(self, dim: int, start: int, length: int) -> Any:
        """The view of `length` elements from `start` along `dim`."""
        axis = check_dim("narrow", dim, self._data.ndim)
        size = self._data.shape[axis]
        start = int(start) + (size if start < 0 else 0)
        if not 0 <= start <= size or length < 0 or start + length > size:
            raise IndexError(
                f"narrow({dim}, {start}, {length}): start + length exceeds dim {dim}'s size "
                f"{size} (shape {self.shape})"
            )
        return self[(slice(None),) * axis + (slice(start, start + length),)]

    def select(self, dim: int, index: int) -> Any:
        """The view at `index` along `dim`, which is removed."""
        axis = check_dim("select", dim, self._data.ndim)
        size = self._data.shape[axis]
        if not -size <= index < size:
            raise IndexError(
                f"select({dim}, {index}): index {index} out of range for dim {dim} of size {size}"
            )
        return self[(slice(None),) * axis + (int(index),)]

    def index_select(self, dim: int, index: Any) -> Any:
        """The slices at `index` (a 1-D integer tensor) along `dim` (a copy; the gradient of
        a repeated index adds up)."""
        axis = check_dim("index_select", dim, self._data.ndim)
        ids = np.asarray(getattr(index, "_data", index))
        if ids.ndim > 1 or ids.dtype.kind not in "iu":
            raise ShapeError(f"index_select(): index must be a 1-D integer tensor, got {ids.shape}")
        if ids.size and (ids.min() < 0 or ids.max() >= self._data.shape[axis]):
            raise IndexError(
                f"index_select(): index out of range for dim {dim} (shape {self.shape})"
            )
        return self[(slice(None),) * axis + (ids.reshape(-1),)]

    def masked_select(self, mask: Any) -> Any:
        """The elements where `mask` (broadcast to self) is True, as a 1-D tensor (a copy)."""
        mask = np.asarray(getattr(mask, "_data", mask))
        if mask.dtype != np.bool_:
            raise DTypeError(f"masked_select(): the mask must be bool, got dtype {mask.dtype}")
        shape = np.broadcast_shapes(self.shape, mask.shape)
        source = self if shape == self.shape else self.expand(shape)
        return source[np.broadcast_to(mask, shape)]

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Any:
        """The diagonal over dims (dim1, dim2) as the last dim: a view, as PyTorch."""
        return ops.Diagonal.apply(self, offset=offset, dim1=dim1, dim2=dim2)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple:
        """Views along `dim`: of size n each (the last may be shorter), or of the listed sizes,
        as PyTorch (NumPy's `np.split` counts pieces instead: see `chunk`)."""
        axis = check_dim("split", dim, self._data.ndim)
        if self._data.ndim == 0:
            raise ShapeError("split(): a 0-d tensor has no dim to split")
        length = self._data.shape[axis]
        if isinstance(split_size_or_sections, (int, np.integer)):
            size = int(split_size_or_sections)
            if size <= 0 and length:
                raise ShapeError(f"split({size}): the piece size must be positive")
            sizes = [min(size, length - start) for start in range(0, length, size)] or [0]
        else:
            sizes = [int(s) for s in split_size_or_sections]
            if sum(sizes) != length or min(sizes, default=0) < 0:
                raise ShapeError(
                    f"split({sizes}, dim={dim}): sizes add up to {sum(sizes)}, but dim {dim} has "
                    f"size {length} (shape {self.shape})"
                )
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * axis + (slice(start, start + size),)
            pieces.append(self[index])
            start += size
        return tuple(pieces)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """`chunks` views along `dim` of size ceil(size / chunks), as PyTorch (maybe fewer)."""
        if not isinstance(chunks, (int, np.integer)) or chunks <= 0:
            raise ShapeError(f"chunk({chunks!r}): the number of chunks must be a positive int")
        axis = check_dim("chunk", dim, self._data.ndim)
        length = self._data.shape[axis] if self._data.ndim else 0
        return self.split(max(1, -(-length // chunks)), dim)

    def unbind(self, dim: int = 0) -> tuple:
        """The views along `dim`, each without it."""
        axis = check_dim("unbind", dim, self._data.ndim)
        if self._data.ndim == 0:
            raise ShapeError("unbind(): a 0-d tensor has no dim to unbind")
        return tuple(self.select(axis, i) for i in range(self._data.shape[axis]))

    def expand(self, *sizes: Any) -> Any:
        """A view broadcast to a larger shape (-1 keeps a dim; new dims come first), as
        PyTorch; its elements share memory, so it cannot be written in place."""
        return ops.BroadcastTo.apply(self, shape=_expanded_shape(self, "expand", sizes))

    def expand_as(self, other: Any) -> Any:
        return self.broadcast_to(other.shape)

    def broadcast_to(self, *shape: Any) -> Any:
        """PyTorch's other name for `expand` (`np.broadcast_to` too): `broadcast_to((2, 3))`
        or `(2, 3)`, -1 keeping a dim; the gradient is summed back over the broadcast dims."""
        return ops.BroadcastTo.apply(self, shape=_expanded_shape(self, "broadcast_to", shape))

    def flip(self, *dims: Any) -> Any:
        """Reverse the order along the given dims (a copy, as PyTorch's; `flip(())` flips
        nothing; NumPy's `flip` of every dim is `np.flip(t)`)."""
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        elif not dims:
            raise TypeError(
                "flip() needs dims, as PyTorch's: flip(0), flip(0, 1). To flip every dim use "
                "np.flip(t) or t.flip(tuple(range(t.ndim)))."
            )
        checked = tuple(check_dim("flip", d, self._data.ndim) for d in dims)
        return ops.Flip.apply(self, axes=checked)

    def fliplr(self) -> Any:
        return self.flip(1)

    def flipud(self) -> Any:
        return self.flip(0)

    def roll(self, shifts: Any, dims: Any = None) -> Any:
        """Shift elements cyclically along `dims` (the flattened tensor without)."""
        listed = shifts.tolist() if isinstance(shifts, np.ndarray) else shifts
        for shift in listed if isinstance(listed, (tuple, list)) else (listed,):
            if isinstance(shift, bool) or not isinstance(shift, (int, np.integer)):
                raise TypeError(f"roll(): shifts must be ints, got {shift!r}")
            if not -(2**63) <= int(shift) < 2**63:
                raise ValueError(
                    f"roll(): the shift {shift} does not fit in int64 (PyTorch: 'Overflow when "
                    "unpacking long long'); a shift is taken modulo the dim's size, so pass "
                    "shift % size"
                )
        if dims is not None:
            listed = dims if isinstance(dims, (tuple, list)) else (dims,)
            for d in listed:
                check_dim("roll", d, self._data.ndim)
        elif isinstance(listed, (tuple, list)) and len(listed) != 1:
            raise ShapeError(
                f"roll(): {len(listed)} shifts {tuple(listed)} need as many dims (dims=...); "
                "without dims one shift rolls the flattened tensor (PyTorch: 'shifts and "
                "dimensions must align')"
            )
        return ops.Roll.apply(self, shifts=shifts, axes=dims)

    def repeat(self, *sizes: Any) -> Any:
        """Tile the whole tensor `sizes` times along each dim (PyTorch; NumPy's `np.tile`)."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        return ops.Tile.apply(self, reps=tuple(int(s) for s in sizes))

    def repeat_interleave(self, repeats: Any, dim: int | None = None) -> Any:
        """Each element (or slice along `dim`) repeated `repeats` times in place (NumPy's
        `np.repeat`; the flattened tensor without `dim`)."""
        source = self.reshape(-1) if dim is None else self
        axis = 0 if dim is None else check_dim("repeat_interleave", dim, self._data.ndim)
        counts = np.asarray(getattr(repeats, "_data", repeats))
        size = source._data.shape[axis] if source._data.ndim else 1
        if counts.dtype.kind not in "iu" or (counts.ndim and counts.shape != (size,)):
            raise ShapeError(
                f"repeat_interleave(): repeats must be an int or one int per element of dim "
                f"{axis} (size {size}), got {counts.shape}"
            )
        index = np.repeat(np.arange(size), counts)
        return source[(slice(None),) * axis + (index,)]

    def pad(self, pad_width: Any, value: float = 0.0) -> Any:
        """Pad with a constant, NumPy's `pad_width` ((before, after) per dim, or one pair for
        all dims)."""
        return ops.Pad.apply(self, pad_width=pad_width, value=value)

    def tril(self, diagonal: int = 0) -> Any:
        """Zero above the `diagonal` (the last two dims)."""
        return self.masked_fill(~_triangle(self, "tril", diagonal), 0)

    def triu(self, diagonal: int = 0) -> Any:
        """Zero below the `diagonal` (the last two dims)."""
        return self.masked_fill(_triangle(self, "triu", diagonal - 1), 0)


def _expanded_shape(t: Any, op: str, sizes: tuple) -> tuple:
    """The shape `expand(*sizes)` asks for: -1 keeps a dim; new dims come first."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    offset = len(sizes) - t._data.ndim
    if offset < 0:
        raise ShapeError(
            f"{op}{tuple(sizes)}: the number of sizes ({len(sizes)}) must be at least the "
            f"number of dims of the tensor (shape {t.shape})"
        )
    return tuple(
        t._data.shape[i - offset] if s == -1 and i >= offset else s for i, s in enumerate(sizes)
    )


def _triangle(t: Any, op: str, diagonal: int) -> np.ndarray:
    """True on and below `diagonal` of the last two dims."""
    if isinstance(diagonal, bool) or not isinstance(diagonal, (int, np.integer)):
        raise TypeError(f"{op}(): diagonal must be an int, got {diagonal!r}")
    if t._data.ndim < 2:
        raise ShapeError(f"{op}: the tensor must have at least 2 dims, got shape {t.shape}")
    rows, cols = t._data.shape[-2:]
    return np.tri(rows, cols, diagonal, dtype=np.bool_)
