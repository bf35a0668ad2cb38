"""Movement ops: reshape, transpose, indexing, joining, selecting (where, masked_fill).

These move or pick elements without arithmetic, so each backward puts the gradient back where
the elements came from.
"""

from __future__ import annotations

import numpy as np

from .. import tensor as _tensor  # (tensor.py imports the ops first: read when called)
from ..errors import ShapeError, dim_error
from ..function import Function
from ..higher_order import where
from ._util import broadcast_shape, normalize_axis, select


class Reshape(Function):
    """out = a.reshape(shape);  da = dout.reshape(a.shape)  (also unsqueeze and squeeze)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    is_view = True  # when the strides allow; otherwise NumPy copies and the result is its own

    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = a.shape
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape):
            raise TypeError(f"Reshape: the shape must be ints, got {tuple(shape)}")
        try:
            return a.reshape(shape)
        except ValueError:
            raise ValueError(
                f"Reshape: cannot reshape a tensor of shape {a.shape} ({a.size} elements) "
                f"into {tuple(shape)}; the element counts must match (one -1 may stand for "
                "the rest)"
            ) from None

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out.reshape(ctx.input_shape),)


def _int_axis(axis, where: str) -> int:
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{where}: dim must be an int, got {type(axis).__name__}")
    return int(axis)


def _in_range(axis: int, ndim: int, where: str) -> int:
    """`axis` of a tensor with `ndim` dims, non-negative; PyTorch's IndexError otherwise (a 0-d
    tensor takes 0 and -1)."""
    span = max(ndim, 1)
    if not -span <= axis < span:
        raise dim_error(where, axis, ndim)
    return axis % span


def unsqueezed_shape(shape: tuple, axis: int) -> tuple:
    """The shape `unsqueeze(axis)` gives: a 1 inserted at `axis` (of the new shape)."""
    where = f"unsqueeze({axis!r})"
    axis = _in_range(_int_axis(axis, where), len(shape) + 1, where)
    return shape[:axis] + (1,) + shape[axis:]


def squeezed_shape(shape: tuple, axis) -> tuple:
    """The shape `squeeze(axis)` gives, as PyTorch: the size-1 dims (of those named) dropped; a
    named dim whose size is not 1 is left as it is."""
    if axis is None:
        return tuple(n for n in shape if n != 1)
    where = f"squeeze({axis!r})"
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    named = {_in_range(_int_axis(a, where), len(shape), where) for a in axes}
    return tuple(n for i, n in enumerate(shape) if i not in named or n != 1)


def swapped_axes(shape: tuple, axis1, axis2) -> tuple:
    """The axes permutation `swapaxes(axis1, axis2)` (PyTorch's `transpose(a, b)`) gives."""
    where = f"transpose({axis1!r}, {axis2!r})"
    a = _in_range(_int_axis(axis1, where), len(shape), where)
    b = _in_range(_int_axis(axis2, where), len(shape), where)
    axes = list(range(len(shape)))
    if axes:
        axes[a], axes[b] = axes[b], axes[a]
    return tuple(axes)


def tensor_sequence(tensors, fn: str) -> tuple:
    """The tensors given to `concatenate` / `stack` (a list, tuple or generator) as a tuple."""
    if isinstance(tensors, (_tensor.Tensor, np.ndarray, str)) or not hasattr(tensors, "__iter__"):
        raise TypeError(
            f"{fn}: expected a list or tuple of tensors, got {type(tensors).__name__}; e.g. "
            f"ta.{fn}([a, b], axis=0)"
        )
    return tuple(tensors)


class Transpose(Function):
    """out = a.transpose(axes);  da = dout.transpose(inverse of axes)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    is_view = True

    @staticmethod
    def forward(ctx, a, axes=None):
        axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(axes)
        if sorted(_in_range(_int_axis(x, "permute"), a.ndim, "permute") for x in axes) != list(
            range(a.ndim)
        ):
            raise ShapeError(
                f"Transpose: axes {axes} are not a permutation of the {a.ndim} axes of a "
                f"tensor of shape {a.shape}"
            )
        ctx.axes = tuple(x % a.ndim for x in axes)  # argsort in backward needs axes >= 0
        return a.transpose(axes)

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out.transpose(tuple(int(i) for i in np.argsort(ctx.axes))),)


class Diagonal(Function):
    """out = the diagonal of a over dims (dim1, dim2), shifted by offset, as the last axis (a
    view, writable, as PyTorch's);  da = zeros with dout on that diagonal"""

    is_view = True

    @staticmethod
    def forward(ctx, a, offset=0, dim1=0, dim2=1):
        if a.ndim < 2:
            raise ShapeError(f"diagonal: the tensor needs at least 2 dims, got shape {a.shape}")
        dim1, dim2 = (_in_range(_int_axis(d, "diagonal"), a.ndim, "diagonal") for d in (dim1, dim2))
        if dim1 == dim2:
            raise ShapeError(f"diagonal: dim1 and dim2 cannot be the same dim ({dim1})")
        ctx.offset, ctx.dim1, ctx.dim2, ctx.input_shape = offset, dim1, dim2, a.shape
        return diagonal_view(a, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad_out):
        grad_a = np.zeros(ctx.input_shape, dtype=grad_out.dtype)
        diagonal_view(grad_a, ctx.offset, ctx.dim1, ctx.dim2)[...] = grad_out
        return (grad_a,)

    @staticmethod
    def backward_graph(ctx, grad_out):
        grad_a = _tensor.Tensor._make(np.zeros(ctx.input_shape, dtype=grad_out.dtype))
        grad_a.diagonal(ctx.offset, ctx.dim1, ctx.dim2).copy_(grad_out)  # (recorded)
        return (grad_a,)


def diagonal_view(a: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A writable view of a's diagonal (NumPy's np.diagonal is read-only)."""
    rows, cols = a.shape[dim1], a.shape[dim2]
    length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    start = [0] * a.ndim
    if length:
        start[dim2 if offset >= 0 else dim1] = abs(offset)
    corner = a[tuple(slice(s, None) for s in start)] if length else a
    others = [d for d in range(a.ndim) if d not in (dim1, dim2)]
    shape = tuple(a.shape[d] for d in others) + (length,)
    strides = tuple(corner.strides[d] for d in others) + (
        corner.strides[dim1] + corner.strides[dim2],
    )
    return np.lib.stride_tricks.as_strided(corner, shape, strides, writeable=a.flags.writeable)


def _is_basic(index) -> bool:
    """True for NumPy basic indexing (ints, slices, None, ...): a view, no repeats."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(isinstance(p, (int, np.integer, slice)) or p is None or p is Ellipsis for p in parts)


class GetItem(Function):
    """out = a[index];  da = zeros like a with dout added at index (repeats accumulate)"""

    is_view = True  # basic indexing (ints, slices) gives a view; integer arrays a copy

    @staticmethod
    def forward(ctx, a, index):
        ctx.input_shape = a.shape
        ctx.input_dtype = a.dtype
        ctx.index = index = _owned(index)
        parts = index if isinstance(index, tuple) else (index,)
        if _is_basic(index) and not any(p is Ellipsis for p in parts):
            index = (*parts, ...)  # (a trailing ...: a[0] is then a 0-d view, not a scalar)
        try:
            return a[index]
        except IndexError as err:
            raise IndexError(f"GetItem: {err} (tensor shape {a.shape})") from None

    @staticmethod
    def backward(ctx, grad_out):
        return (scatter_add(grad_out, ctx.index, ctx.input_shape),)

    @staticmethod
    def backward_graph(ctx, grad_out):
        return (IndexAdd.apply(grad_out, index=ctx.index, shape=ctx.input_shape),)


class IndexAdd(Function):
    """out = zeros(shape) with src added at index (repeats add up): GetItem's gradient as an op,
    so that it can be differentiated again;  dsrc = dout[index]"""

    saved_as = ()  # (backward_graph: its backward runs on Tensors, see higher_order.py)

    @staticmethod
    def forward(ctx, src, index, shape):
        ctx.index = index
        return scatter_add(src, index, shape)

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out[ctx.index],)


def scatter_add(src: np.ndarray, index, shape: tuple) -> np.ndarray:
    """zeros(shape) with `src` added at `index`, each repeated index adding once per use."""
    out = np.zeros(shape, dtype=src.dtype)
    if _is_basic(index):
        out[index] = src
    elif isinstance(index, np.ndarray) and index.dtype.kind in "iu" and index.size:
        _add_rows(out, index, src)  # an embedding's rows: ids into the first axis
    else:
        np.add.at(out, index, src)  # (unlike `out[index] += src`, adds once per repeat)
    return out


def _add_rows(grad_a: np.ndarray, index: np.ndarray, grad_out: np.ndarray) -> None:
    """grad_a[index] += grad_out, a repeated id adding once per use, for one integer array
    indexing the first axis: the ids sorted, so each run of one id is summed in one pass
    (np.add.at adds row by row: 4-5 times slower for an embedding's batch of ids)."""
    ids = index.reshape(-1) % grad_a.shape[0]  # (N,), negative ids counted from the end
    rows = grad_out.reshape(ids.shape + grad_a.shape[1:])  # (N, ...)
    order = np.argsort(ids, kind="stable")  # (stable: each id's rows keep their order)
    ids = ids[order]
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))  # a run per id
    grad_a[ids[starts]] = np.add.reduceat(rows[order], starts, axis=0)


def _owned(index):
    """The index with each array in it copied: a caller who refills an index array (a batch of
    token ids, class labels) between forward and backward must not move the gradient."""
    if isinstance(index, tuple):
        return tuple(_owned(i) for i in index)
    if isinstance(index, np.ndarray):
        return index.copy()
    if isinstance(index, list):
        try:
            array = np.array(index)
        except ValueError:  # (a ragged list: NumPy raises its own error at the lookup)
            return list(index)
        return array if array.dtype.kind in "iub" else list(index)
    return index


class Concatenate(Function):
    """out = concatenate(tensors, axis);  each input gets its slice of dout"""

    @staticmethod
    def forward(ctx, *arrays, axis=0):
        if not arrays:
            raise ValueError("Concatenate: needs at least one tensor")
        for i, a in enumerate(arrays):
            if a.ndim == 0:
                raise ValueError(
                    f"Concatenate: tensor {i} is 0-d (shape ()), and 0-d tensors cannot be "
                    "concatenated (NumPy and PyTorch refuse too); use ta.stack(tensors) to join "
                    "them along a new axis"
                )
        ctx.axis = normalize_axis(axis, arrays[0].ndim, "Concatenate", arrays[0].shape)
        ctx.sizes = [a.shape[ctx.axis] for a in arrays]
        try:
            return np.concatenate(arrays, axis=ctx.axis)
        except ValueError:
            shapes = ", ".join(str(a.shape) for a in arrays)
            raise ValueError(
                f"Concatenate: shapes {shapes} must be equal except along axis {axis}"
            ) from None

    @staticmethod
    def backward(ctx, grad_out):
        return tuple(np.split(grad_out, np.cumsum(ctx.sizes)[:-1], axis=ctx.axis))

    @staticmethod
    def backward_graph(ctx, grad_out):
        ends = np.cumsum(ctx.sizes)
        return tuple(grad_out.narrow(ctx.axis, e - n, n) for e, n in zip(ends, ctx.sizes))


class Stack(Function):
    """out = stack(tensors, axis);  input i gets dout taken at position i along axis"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, *arrays, axis=0):
        if not arrays:
            raise ValueError("Stack: needs at least one tensor")
        ctx.axis = normalize_axis(axis, arrays[0].ndim + 1, "Stack", arrays[0].shape)
        if len({a.shape for a in arrays}) != 1:
            shapes = ", ".join(str(a.shape) for a in arrays)
            raise ValueError(f"Stack: all tensors must have the same shape, got {shapes}")
        return np.stack(arrays, axis=ctx.axis)

    @staticmethod
    def backward(ctx, grad_out):
        return tuple(np.moveaxis(grad_out, ctx.axis, 0))


def _check_bool(op: str, mask: np.ndarray, what: str) -> None:
    if mask.dtype != np.bool_:
        raise TypeError(
            f"{op}: {what} must be a bool tensor, got dtype {mask.dtype}. Build it with a "
            "comparison (e.g. x > 0) or .astype(bool)."
        )


class Where(Function):
    """out = where(cond, a, b);  da = dout where cond,  db = dout where not cond"""

    @staticmethod
    def forward(ctx, condition, a, b):
        _check_bool("Where", condition, "the condition")
        broadcast_shape("Where", condition.shape, a.shape, b.shape)
        ctx.save_for_backward(condition)
        return select(condition, a, b)  # (np.where, by bits: ops/_util.py)

    @staticmethod
    def backward(ctx, grad_out):
        (condition,) = ctx.saved_tensors
        zero = np.zeros((), dtype=grad_out.dtype)
        grad_a = select(condition, grad_out, zero) if ctx.needs_input_grad[1] else None
        grad_b = select(condition, zero, grad_out) if ctx.needs_input_grad[2] else None
        return None, grad_a, grad_b

    @staticmethod
    def backward_graph(ctx, grad_out):
        (condition,) = ctx.saved_tensors
        grad_a = where(condition, grad_out, 0.0) if ctx.needs_input_grad[1] else None
        grad_b = where(condition, 0.0, grad_out) if ctx.needs_input_grad[2] else None
        return None, grad_a, grad_b


class MaskedFill(Function):
    """out = value where mask, else a;  da = dout where not mask, else 0;
    dvalue = sum(dout where mask)  (when value is a 0-d tensor)"""

    @staticmethod
    def forward(ctx, a, mask, *fill, value=None):
        _check_bool("MaskedFill", mask, "the mask")
        if broadcast_shape("MaskedFill", a.shape, mask.shape) != a.shape:
            raise ValueError(
                f"MaskedFill: a mask of shape {mask.shape} would enlarge the tensor of shape "
                f"{a.shape}; the mask must broadcast to the tensor's shape"
            )
        value = np.asarray(fill[0] if fill else value)
        if value.ndim != 0:
            raise ValueError(
                f"MaskedFill: the value has shape {value.shape}; it must be a number or a 0-d "
                "tensor, as in PyTorch (to fill from an array, use ta.where(mask, value, x))"
            )
        if value.dtype.kind not in "fiub":
            raise TypeError(f"MaskedFill: the value must be a real number, got dtype {value.dtype}")
        ctx.save_for_backward(mask)
        # A copy, then the value written where the mask is set: half the time of np.where,
        # which chooses per element between two arrays.
        out = a.copy()
        np.copyto(out, value.astype(a.dtype), where=mask)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = grad_out.copy()
            np.copyto(grad_a, 0, where=mask)
        if len(ctx.needs_input_grad) == 2:
            return grad_a, None
        grad_value = np.sum(grad_out, where=mask) if ctx.needs_input_grad[2] else None
        return grad_a, None, grad_value

    @staticmethod
    def backward_graph(ctx, grad_out):
        (mask,) = ctx.saved_tensors
        grad_a = grad_out.masked_fill(mask, 0.0) if ctx.needs_input_grad[0] else None
        if len(ctx.needs_input_grad) == 2:
            return grad_a, None
        wanted = ctx.needs_input_grad[2]
        return grad_a, None, where(mask, grad_out, 0.0).sum() if wanted else None
