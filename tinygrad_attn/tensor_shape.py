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
        return self.reshape(other.shape)

    def reshape_as(self, other: Any) -> Any:
        return self.reshape(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Any:
        """Merge axes start_dim..end_dim into one (all axes by default)."""
        shape = self._data.shape
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
        if self._data.ndim > 2:
            raise ValueError(f"t(): expects at most 2 axes, got shape {self.shape}; use mT")
        return self.transpose()

    @property
    def mT(self) -> Any:  # noqa: N802
        """The last two axes swapped."""
        return self.swapaxes(-1, -2)

    def moveaxis(self, source: Any, destination: Any) -> Any:
        """Move axes to new positions (`np.moveaxis`)."""
        ndim = self._data.ndim
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
        length = self._data.shape[dim]
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
        axis = dim % self._data.ndim
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * axis + (slice(start, start + size),)
            pieces.append(self[index])
            start += size
        return tuple(pieces)

    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        """`chunks` pieces along `dim` of size ceil(length / chunks), as PyTorch."""
        length = self._data.shape[dim]
        return self.split(max(1, -(-length // chunks)), dim)

    def unbind(self, dim: int = 0) -> tuple:
        return tuple(piece.squeeze(dim) for piece in self.split(1, dim))

    def expand(self, *sizes: Any) -> Any:
        """Broadcast to a larger shape (-1 keeps an axis), as PyTorch; no copy forward."""
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        offset = len(sizes) - self._data.ndim
        shape = tuple(
            self._data.shape[i - offset] if s == -1 and i >= offset else s
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
        rows, cols = self._data.shape[-2:]
        keep = np.tri(rows, cols, diagonal, dtype=np.bool_)
        return self.masked_fill(~keep, 0)

    def triu(self, diagonal: int = 0) -> Any:
        """Zero below the `diagonal` (last two axes)."""
        rows, cols = self._data.shape[-2:]
        below = np.tri(rows, cols, diagonal - 1, dtype=np.bool_)
        return self.masked_fill(below, 0)
