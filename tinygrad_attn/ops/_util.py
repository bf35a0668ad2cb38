"""Small argument checks shared by the ops (axes, dtypes); no calculus here."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..state import get_default_dtype


def normalize_axis(axis: int, ndim: int, op: str, shape: tuple) -> int:
    """`axis` as a non-negative int, or a ValueError naming the op and the shape."""
    if not isinstance(axis, (int, np.integer)) or isinstance(axis, bool):
        raise TypeError(f"{op}: axis must be an int, got {type(axis).__name__}")
    axes = max(ndim, 1)  # a 0-d tensor takes axis 0 or -1, as in PyTorch
    if not -axes <= axis < axes:
        raise ValueError(
            f"{op}: axis {axis} does not exist for a tensor of shape {shape} "
            f"({ndim} axes: use an axis from {-axes} to {axes - 1})"
        )
    return int(axis) % axes


def normalize_axes(axis: Any, ndim: int, op: str, shape: tuple) -> tuple:
    """`axis` (None, int or sequence) as a sorted tuple of non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    if not isinstance(axis, (int, np.integer, tuple, list)):
        raise TypeError(
            f"{op}: axis must be an int, a tuple of ints or None, got {type(axis).__name__}"
        )
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    normalized = tuple(sorted(normalize_axis(a, ndim, op, shape) for a in axes))
    if ndim == 0:
        return ()  # axis 0 or -1 of a 0-d tensor (allowed, as PyTorch): nothing to reduce
    if len(set(normalized)) != len(normalized):
        raise ValueError(f"{op}: axis {axis} repeats an axis (shape {shape})")
    return normalized


def frozen(array: np.ndarray) -> np.ndarray:
    """`array` made read-only, and the buffer it views if it is a view: an intermediate an op
    saves (with its buffer, which the op made too) is nobody else's, so it needs no lock
    (saved.py); read-only, not even a debugging hand can change it behind the graph. Never
    for a view of an input's data: that memory may be the user's."""
    part = array
    while part is not None:
        part.setflags(False)
        part = part.base if isinstance(part.base, np.ndarray) else None
    return array


# Elements per block of `blockwise`: a handful of arrays this size (256 KB each in float32)
# stay in the CPU's cache between one NumPy pass and the next.
BLOCK = 1 << 16


def blockwise(kernel: Any, x: np.ndarray, outputs: int, scratch: int) -> list:
    """Run the elementwise `kernel(x, *outs, *buffers)` over blocks of `x` (flattened) and
    return the `outputs` arrays of x's shape it wrote. A chain of a dozen NumPy passes over a
    block that stays in cache runs about twice as fast as the same passes over a whole
    activation (which the memory bus then carries a dozen times)."""
    flat = x.reshape(-1)
    outs = [np.empty_like(flat) for _ in range(outputs)]
    buffers = [np.empty(min(BLOCK, flat.size), x.dtype) for _ in range(scratch)]
    for start in range(0, flat.size, BLOCK):
        stop = min(flat.size, start + BLOCK)
        parts = [out[start:stop] for out in outs] + [b[: stop - start] for b in buffers]
        kernel(flat[start:stop], *parts)
    return [out.reshape(x.shape) for out in outs]


_SAME_SIZE_INTS = {2: np.int16, 4: np.int32, 8: np.int64}


def select(condition: np.ndarray, a: Any, b: Any) -> np.ndarray:
    """np.where(condition, a, b) for float arrays, by their bits: each element's bits come from
    `a` where the condition is set, else from `b` (AND with all ones or all zeros, then OR).
    Exact for every value (inf, NaN, -0.0) and with no choice per element: NumPy's where
    branches on each element, which on a mask that changes at random costs about ten passes.
    Other dtypes (ints, bools, complex) go to np.where."""
    dtype = np.result_type(a, b)
    ints = _SAME_SIZE_INTS.get(dtype.itemsize) if dtype.kind == "f" else None
    if ints is None:
        return np.where(condition, a, b)
    shape = np.broadcast_shapes(condition.shape, np.shape(a), np.shape(b))
    a_bits = np.broadcast_to(np.asarray(a, dtype), shape).view(ints)
    b_bits = np.broadcast_to(np.asarray(b, dtype), shape).view(ints)
    mask = np.empty(shape, ints)  # (arrays given as out: a 0-d result stays an array)
    np.negative(np.broadcast_to(condition, shape), dtype=ints, out=mask)  # all ones where set
    out = np.bitwise_and(a_bits, mask, out=np.empty(shape, ints))
    np.invert(mask, out=mask)
    mask &= b_bits
    out |= mask
    return out.view(dtype)


def row_sums(a: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """scale * a.sum(axis=-1), as a product with a vector: BLAS does it several times faster
    than NumPy's reduction over short rows. Shape: `a`'s without its last axis."""
    weights = np.empty(a.shape[-1], dtype=a.dtype)
    weights.fill(scale)  # (np.full does the same in Python, three times slower on short rows)
    return a @ weights


def expand_reduced(grad: np.ndarray, axes: tuple, keepdims: bool, shape: tuple) -> np.ndarray:
    """Spread the gradient of a reduction back over the input's shape (a new array: that is
    several times faster than NumPy's broadcast_to view at the sizes a step has most of)."""
    if not keepdims:  # put the reduced axes back, as size 1
        grad = grad.reshape([1 if i in axes else n for i, n in enumerate(shape)])
    if not isinstance(grad, (np.ndarray, np.generic)):  # a Tensor (backward_graph): an op
        return grad.expand(shape)
    spread = np.empty(shape, grad.dtype)
    spread[...] = grad
    return spread


def broadcast_shape(op: str, *shapes: tuple) -> tuple:
    """The broadcast of `shapes`, or a ValueError that names the op and the shapes."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        listed = " and ".join(str(s) for s in shapes)
        raise ValueError(
            f"{op}: shapes {listed} do not broadcast. Trailing axes must be equal or 1; "
            "reshape or unsqueeze one operand so they line up."
        ) from None


def float_input(a: np.ndarray) -> np.ndarray:
    """The input of a float function (exp, erf, softmax, ...): integers and bools become the
    default float dtype, as in PyTorch (NumPy would pick float16 for int8, float64 for int64)."""
    return a if a.dtype.kind == "f" else a.astype(get_default_dtype())
