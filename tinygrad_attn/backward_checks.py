"""The checks of a backward pass, with the errors that explain them: where backward starts
(`root_gradient`), what an op's backward returned (`check_arity`), what a hook returned
(`checked_hook_result`), a gradient that cannot be an integer tensor's (`integer_input`).

The engine calls these; they compute nothing of the pass themselves.
"""

from __future__ import annotations

from typing import Any, NoReturn

import numpy as np

from . import tensor as _tensor  # (tensor.py imports the engine first: read at call time)


def checked_hook_result(hooked: Any, grad: np.ndarray, hook: Any, where: str) -> np.ndarray:
    """A hook's returned gradient, if it has the gradient's shape; else an error naming both."""
    name = getattr(hook, "__qualname__", None) or repr(hook)
    result = hooked._data if isinstance(hooked, _tensor.Tensor) else np.asarray(hooked)
    if result.shape != grad.shape or result.dtype.kind not in "fiu":
        raise RuntimeError(
            f"hook {name} on {where} returned an array of shape {result.shape} and dtype "
            f"{result.dtype}, but the gradient it replaces has shape {grad.shape} "
            f"({grad.dtype}). A hook must return a gradient of the same shape, or None to "
            "keep the gradient as it is."
        )
    return result.astype(grad.dtype, copy=False)


def check_arity(node: Any, grad_inputs: Any) -> tuple:
    """`backward`'s result as a tuple of one gradient per input, or an error naming the op."""
    if grad_inputs.__class__ is not tuple:
        grad_inputs = (grad_inputs,)
    if len(grad_inputs) == len(node.parents):
        return grad_inputs
    raise RuntimeError(
        f"{node.name}.backward returned {len(grad_inputs)} gradient(s) for "
        f"{len(node.parents)} input(s); return one entry per forward input, in order, with None "
        "where no gradient flows."
    )


def integer_input(parent: Any, node: Any) -> NoReturn:
    """`t.requires_grad = True` set on an integer tensor (nothing checks it): refused."""
    raise TypeError(
        f"backward(): input {position(node, parent)} of {node.name} requires grad but has dtype "
        f"{parent.grad_like[1]}: its gradient would be rounded. Make it a float tensor first."
    )


def position(node: Any, parent: Any) -> int:
    return next((i for i, p in enumerate(node.parents) if p is parent), 0)


def _made_by(root: Any) -> str:
    return f" (made by {root.grad_fn.name})" if root.grad_fn is not None else ""


def root_gradient(root: Any, gradient: Any, create_graph: bool = False) -> Any:
    """The gradient backward starts from: ones for a one-element root, else `gradient` (with
    `create_graph`, a Tensor: one that requires grad stays in the graph)."""
    if create_graph:
        if isinstance(gradient, _tensor.Tensor) and gradient.shape == root.shape:
            return gradient if gradient.dtype == root.dtype else gradient.to(root.dtype)
        return _tensor.Tensor._make(root_gradient(root, gradient))
    if gradient is None and root.requires_grad and root._data.size == 1:  # loss.backward()
        return np.ones(root._data.shape, dtype=root._data.dtype)
    if not root.requires_grad:
        raise RuntimeError(
            f"backward(): this tensor (shape {root.shape}) does not require grad and has no "
            "grad_fn, so there is nothing to differentiate. Create the leaves you want "
            "gradients for with requires_grad=True, and do not compute it under no_grad()."
        )
    if gradient is None:
        if root._data.size != 1:
            raise RuntimeError(
                f"backward(): the gradient can be implied only for a one-element output, but this "
                f"output{_made_by(root)} has shape {root.shape}. Reduce it first (e.g. "
                f"out.sum().backward()) or pass gradient=<array of shape {root.shape}>."
            )
        return np.ones(root.shape, dtype=root.dtype)
    raw = gradient._data if isinstance(gradient, _tensor.Tensor) else gradient
    try:
        array = np.asarray(raw)
    except ValueError:  # a ragged list: reported as data that is not numbers, below
        array = np.empty(0, dtype=object)
    if array.dtype.kind not in "fiub":
        raise TypeError(
            f"backward(gradient=...): got {type(raw).__name__} data of dtype {array.dtype}; pass "
            f"numbers: an array of shape {root.shape}."
        )
    if array.shape != root.shape:
        raise RuntimeError(
            f"backward(gradient=...): the gradient has shape {array.shape} but the output "
            f"has shape {root.shape}; they must be equal. Pass the gradient of what you are "
            f"differentiating with respect to this output{_made_by(root)}: one number per "
            "output element."
        )
    return array.astype(root.dtype, copy=False)
