"""Shape and copy ops added for PyTorch's spellings: cast, clone, broadcast, flip, roll, tile, pad.

Like the movement ops, each moves or copies elements without arithmetic, so its backward puts
the gradient back where each element came from.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from ._util import normalize_axes


class Cast(Function):
    """out = a.astype(dtype);  da = dout (the engine casts it to a's dtype)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, dtype):
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out,)


class Clone(Function):
    """out = copy of a;  da = dout"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a):
        return a.copy()

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out,)


class BroadcastTo(Function):
    """out = broadcast_to(a, shape);  da = dout (the engine sums it back over the new axes)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    is_view = True  # (a read-only view: its elements share memory)

    @staticmethod
    def forward(ctx, a, shape):
        try:
            return np.broadcast_to(a, shape)
        except ValueError:
            raise ValueError(
                f"BroadcastTo: cannot broadcast shape {a.shape} to {tuple(shape)}; each axis "
                "must be equal or 1 (-1 keeps an axis in expand)"
            ) from None

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out,)


class Flip(Function):
    """out = flip(a, axes);  da = flip(dout, axes)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, axes=None):
        ctx.axes = normalize_axes(axes, a.ndim, "Flip", a.shape)
        return np.flip(a, ctx.axes)

    @staticmethod
    def backward(ctx, grad_out):
        return (np.flip(grad_out, ctx.axes),)


class Roll(Function):
    """out = roll(a, shifts, axes);  da = roll(dout, -shifts, axes)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, shifts, axes=None):
        ctx.shifts = shifts
        ctx.axes = axes
        return np.roll(a, shifts, axes)

    @staticmethod
    def backward(ctx, grad_out):
        back = -np.asarray(ctx.shifts)
        return (np.roll(grad_out, back if back.ndim else int(back), ctx.axes),)


class Tile(Function):
    """out = tile(a, reps) (PyTorch's repeat);  da = dout summed over the copies"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, reps):
        if len(reps) < a.ndim:
            raise ValueError(
                f"Tile: repeat{tuple(reps)} needs at least one count per axis of shape {a.shape}"
            )
        ctx.shape = (1,) * (len(reps) - a.ndim) + a.shape
        ctx.reps = tuple(reps)
        return np.tile(a, reps)

    @staticmethod
    def backward(ctx, grad_out):
        # (r0 * s0, r1 * s1, ...) -> (r0, s0, r1, s1, ...): sum over every copy axis r_i.
        split = [n for pair in zip(ctx.reps, ctx.shape) for n in pair]
        grad = grad_out.reshape(split).sum(axis=tuple(range(0, len(split), 2)))  # ctx.shape
        return (grad,)


class Pad(Function):
    """out = pad(a, pad_width, constant value);  da = dout with the padding cut off"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, a, pad_width, value=0.0):
        widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (a.ndim, 2))
        if (widths < 0).any():
            raise ValueError(f"Pad: pad widths must be >= 0, got {pad_width}")
        ctx.inner = tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, a.shape))
        return np.pad(a, widths, constant_values=value)

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out[ctx.inner],)
