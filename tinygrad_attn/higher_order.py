"""The backward pass as a graph: how an op's gradient is computed with recorded Tensor ops when
`backward(create_graph=True)` (or `autograd.grad(..., create_graph=True)`) asks for it, so that
the gradient can be differentiated again.

An op's `backward_graph(ctx, grad_out)` gets `grad_out` as a Tensor and returns Tensors. By
default it runs the op's own `backward` on Tensors: most backwards are written with operators
and NumPy functions that a Tensor answers as ops (`grad_out * b`, `np.exp(-a * a)`), so the
same formula serves both passes. What the op saved is then handed to it as tensors of the
graph, as its class attribute `saved_as` says: an input's index (the tensor is that input,
connected to the node that made it), "out" (the op's own output, connected to this node), or
None (a constant: a mask, an index). An op whose backward needs NumPy's tricks (in-place writes,
`np.add.at`, fused kernels) writes its own `backward_graph` with Tensor ops instead.

A user's `Function` whose backward works on NumPy arrays cannot be recorded; it says how to
become twice-differentiable: write the backward with Tensor ops and set `tensor_backward =
True`, then it receives Tensors in every pass (as `torch.autograd.Function`'s backward does).
This module must not run the engine's loop (engine.py does) nor know any op's formula.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import function as _function  # (function.py imports this module last: read late)
from . import tensor as _tensor


def run_backward_on_tensors(ctx: Any, grad_out: Any) -> Any:
    """`type(ctx).backward(ctx, grad_out)` with `ctx.saved_tensors` as tensors of the graph."""
    op = type(ctx)
    roles = op.saved_as if op.saved_as is not None else ctx.__dict__.get("_saved_roles")
    if roles is None:
        raise OnceDifferentiable(_not_recordable(op))
    saved = ctx.saved_tensors  # (the version check runs here, on the arrays)
    if roles == "inputs":  # (an op of any number of inputs that saves them all: Einsum)
        roles = range(len(saved))
    ctx._saved = tuple(graph_value(ctx, array, role) for array, role in zip(saved, roles))
    try:
        return op.backward(ctx, grad_out)
    finally:
        ctx._saved = saved


def graph_saved(ctx: Any) -> tuple:
    """What the op saved, as tensors of the graph (by its `saved_as`): for a `backward_graph`
    written by hand."""
    saved = ctx.saved_tensors
    return tuple(graph_value(ctx, a, role) for a, role in zip(saved, type(ctx).saved_as))


def graph_inputs(ctx: Any, *arrays: Any) -> tuple:
    """The op's inputs as tensors of the graph, given their values (what it saved of them)."""
    return tuple(graph_value(ctx, a, i) for i, a in enumerate(arrays))


def composite_backward(ctx: Any, grad_out: Any, composite: Any, values: tuple) -> tuple:
    """The `backward_graph` of a fused op: its forward again as primitive Tensor ops
    (`composite(*inputs)`, on the inputs as tensors of the graph, whose `values` the op saved),
    differentiated with `autograd.grad(..., create_graph=True)`. Each input goes through its
    own Clone first, so that two inputs from one tensor (x * x) get their own gradients."""
    from .autograd import grad
    from .ops import Clone

    needs = ctx.needs_input_grad
    ins = [graph_value(ctx, v, i) for i, v in enumerate(values)]
    ins = [Clone.apply(t) if need else t for t, need in zip(ins, needs)]
    out = composite(*ins)
    wanted = [t for t, need in zip(ins, needs) if need]
    found = iter(grad(out, wanted, grad_out, create_graph=True, allow_unused=True))
    return tuple(next(found) if need else None for need in needs)


def where(condition: Any, a: Any, b: Any) -> Any:
    """`ta.where` (for a `backward_graph`: the package's ops import this module first)."""
    from .creation import where as tensor_where

    return tensor_where(condition, a, b)


def graph_value(ctx: Any, array: Any, role: Any) -> Any:
    """A saved array as a tensor of the graph: input i, the output, or a constant."""
    Tensor = _tensor.Tensor
    if array is None or not hasattr(array, "shape"):
        return array
    array = np.asarray(array)  # (a forward of 0-d arrays may have saved a NumPy scalar)
    if role == "out":
        return shell(array, ctx)
    if isinstance(role, int):
        parent = ctx.parents[role]
        if not ctx.needs_input_grad[role]:
            return Tensor._make(array)
        return shell(array, parent) if isinstance(parent, _function.Function) else parent
    return Tensor._make(array)


def shell(array: Any, node: Any) -> Any:
    """A tensor holding `array` whose gradient flows to `node` (the node that made it)."""
    tensor = _tensor.Tensor._make(array)
    tensor.grad_fn, tensor.requires_grad = node, True
    return tensor


def record_roles(ctx: Any, arrays: list, out: Any) -> None:
    """For a user's op with `tensor_backward = True`: what each saved array is (by identity:
    an input's index, "out", or None), so its backward can be handed tensors of the graph."""
    roles = []
    for saved in ctx._saved or ():
        role = next((i for i, a in enumerate(arrays) if a is saved), None)
        roles.append("out" if saved is out else role)
    ctx._saved_roles = tuple(roles)


def run_tensor_backward(ctx: Any, grad_out: Any) -> Any:
    """A `tensor_backward` user op in an ordinary pass: its backward gets Tensors (constants,
    no graph recorded) and its results go back to the engine as arrays."""
    from .state import no_grad

    saved = ctx.saved_tensors
    ctx._saved = tuple(
        _tensor.Tensor._make(a) if hasattr(a, "shape") else a for a in saved
    )  # fmt: skip
    try:
        with no_grad():
            grads = type(ctx).backward(ctx, _tensor.Tensor._make(grad_out))
    finally:
        ctx._saved = saved
    grads = grads if isinstance(grads, tuple) else (grads,)
    return tuple(g._data if isinstance(g, _tensor.Tensor) else g for g in grads)


class OnceDifferentiable(RuntimeError):
    """A user's op whose backward works on NumPy arrays met backward(create_graph=True)."""


def _not_recordable(op: type) -> str:
    return (
        f"{op.__name__}.backward works on NumPy arrays, so backward(create_graph=True) cannot "
        "record its gradient as a graph to differentiate again. To make it twice-"
        "differentiable, write its backward with Tensor operations (grad_out * b, "
        "x.exp(), ta.where(...), no in-place writes into NumPy arrays) and set "
        f"`tensor_backward = True` on the class: {op.__name__}.backward then receives "
        "Tensors (grad_out and ctx.saved_tensors) and returns Tensors, as the backward of a "
        "torch.autograd.Function does."
    )
