"""Ops that stand for a write into a tensor: `x[index] = v`, `copy_`, `fill_`, and a write
through a view into the tensor it views (PyTorch's CopySlices).

An in-place change of a tensor that is part of a graph is recorded as a node like any other
(inplace.py decides when, and moves the tensor onto the new node). These are the nodes whose
result is not arithmetic on the old value: the old value's gradient is zero where the write
landed and passes unchanged elsewhere.
"""

from __future__ import annotations

import numpy as np

from ..function import Function
from .movement import _owned


class Copy(Function):
    """out = src broadcast to `shape`, in `dtype` (copy_, fill_, normal_ of a graph tensor, whose
    old values the result does not depend on);  dsrc = dout (summed back over the broadcast)"""

    saved_as = ()  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, src, shape, dtype):
        try:
            return np.broadcast_to(src, shape).astype(dtype)
        except ValueError:
            raise ValueError(
                f"Copy: a value of shape {src.shape} does not broadcast to the tensor's shape "
                f"{tuple(shape)}; in place, the value must fit the tensor without enlarging it"
            ) from None

    @staticmethod
    def backward(ctx, grad_out):
        return (grad_out,)


class IndexPut(Function):
    """out = a with out[index] = values;  da = dout with 0 at index,  dvalues = dout[index]"""

    @staticmethod
    def forward(ctx, a, values, index):
        ctx.index = index = _owned(index)
        out = a.copy()
        try:
            out[index] = values
        except (IndexError, ValueError) as err:
            raise type(err)(
                f"IndexPut (t[index] = value): {err} (tensor shape {a.shape}, value shape "
                f"{values.shape})"
            ) from None
        return out

    @staticmethod
    def backward(ctx, grad_out):
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = grad_out.copy()
            grad_a[ctx.index] = 0
        grad_values = grad_out[ctx.index] if ctx.needs_input_grad[1] else None
        return grad_a, grad_values

    @staticmethod
    def backward_graph(ctx, grad_out):
        grad_a = None
        if ctx.needs_input_grad[0]:
            grad_a = grad_out.clone()
            grad_a[ctx.index] = 0.0  # (recorded: an IndexPut of its own)
        grad_values = grad_out[ctx.index] if ctx.needs_input_grad[1] else None
        return grad_a, grad_values


class CopySlices(Function):
    """out = base with its view (the chain of view ops `chain`) replaced by src;
    dbase = dout with 0 in the view,  dsrc = dout's view (the chain applied to dout)"""

    is_view = True  # the result is the base's own memory, written

    @staticmethod
    def forward(ctx, base, src, region, chain):
        ctx.chain = chain
        np.copyto(region, src, casting="unsafe")  # `region` views base's memory (inplace.py)
        return base

    @staticmethod
    def backward(ctx, grad_out):
        grad_base = grad_out.copy()
        region = replay(ctx.chain, grad_base)
        if np.shares_memory(region, grad_base):  # every step was a view: write into it
            grad_src = region.copy()
            region[...] = 0
        else:  # a reshape copied: find the view's elements by their positions instead
            positions = replay(ctx.chain, np.arange(grad_out.size).reshape(grad_out.shape))
            grad_src = grad_base.reshape(-1)[positions]
            grad_base.reshape(-1)[positions] = 0
        return (grad_base if ctx.needs_input_grad[0] else None), grad_src

    @staticmethod
    def backward_graph(ctx, grad_out):
        shape = grad_out.shape
        positions = replay(ctx.chain, np.arange(int(np.prod(shape))).reshape(shape))
        grad_src = grad_out.reshape(-1)[positions]  # the view's elements, by their positions
        grad_base = None
        if ctx.needs_input_grad[0]:
            grad_base = grad_out.clone()
            grad_base.view(-1)[positions] = 0.0  # (recorded: the view's gradient taken out)
        return grad_base, grad_src


def replay(chain: tuple, array: np.ndarray) -> np.ndarray:
    """The view that `chain` ((op class, params), ...) takes of a tensor, taken of `array`."""
    for op, params in chain:
        array = op.forward(op.__new__(op), array, **params)
    return array
