"""The API around the engine, as PyTorch's `torch.autograd`: `grad`, `backward`, the checks
(`gradcheck`, `gradgradcheck`), `functional` (jacobian, hessian, vjp, jvp, hvp, vhp), and the
grad and anomaly modes. The engine itself (tensor.py, function.py, engine.py) knows nothing of
this package; everything here runs the engine's one loop (`engine.backward_steps`).

`grad(outputs, inputs, ...)` hands back the gradients of `inputs` (leaves or not) without
touching any `.grad`, running only the nodes on a path to them; with `create_graph=True` the
gradients are Tensors with a graph of their own, so they can be differentiated again.
"""

from __future__ import annotations

import collections
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import engine
from ..debug import detect_anomaly, set_detect_anomaly
from ..function import Function
from ..state import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from ..tensor import Tensor
from . import functional
from .gradcheck import GradcheckError, gradcheck, gradgradcheck

__all__ = [
    "Function",
    "GradcheckError",
    "backward",
    "detect_anomaly",
    "enable_grad",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "inference_mode",
    "is_grad_enabled",
    "no_grad",
    "set_detect_anomaly",
    "set_grad_enabled",
]


def _tensors(value: Any, what: str) -> list:
    items = [value] if isinstance(value, Tensor) else list(value)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            raise TypeError(f"autograd.grad: {what}[{i}] must be a Tensor, got {type(t).__name__}")
    return items


def grad(
    outputs: Any,
    inputs: Any,
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple:
    """The gradients of `outputs` (weighted by `grad_outputs`, ones for a one-element output)
    with respect to each of `inputs`, as a tuple of Tensors, as `torch.autograd.grad`. No
    `.grad` changes. `retain_graph` defaults to `create_graph`; an input the outputs do not
    depend on is an error naming it, unless `allow_unused=True` (then None, or zeros with
    `materialize_grads=True`)."""
    if is_grads_batched:
        raise NotImplementedError("autograd.grad(is_grads_batched=True) is not supported")
    outputs, inputs = _tensors(outputs, "outputs"), _tensors(inputs, "inputs")
    grad_outputs = [None] * len(outputs) if grad_outputs is None else _as_list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise ValueError(
            f"autograd.grad: {len(grad_outputs)} grad_outputs for {len(outputs)} outputs"
        )
    for i, t in enumerate(inputs):
        if not t.requires_grad:
            raise RuntimeError(
                f"autograd.grad: inputs[{i}]{_named(t)} (shape {t.shape}) does not require "
                "grad, so no gradient can reach it: one of the differentiated Tensors does not "
                "require grad. Create it with requires_grad=True."
            )
    capture = {engine.key(t): None for t in inputs}
    retain = create_graph if retain_graph is None else retain_graph
    with np.errstate(all="ignore"):  # (inf and nan arise silently, as in Tensor.backward)
        steps = engine.backward_steps(outputs, grad_outputs, bool(retain), create_graph, capture)
        collections.deque(steps, maxlen=0)
    unused = allow_unused or materialize_grads
    return tuple(_result(t, capture[engine.key(t)], i, unused, materialize_grads)
                 for i, t in enumerate(inputs))  # fmt: skip


def _result(t: Tensor, found: Any, index: int, allow_unused: bool, materialize: bool) -> Any:
    if found is None:
        if materialize:
            return Tensor._make(np.zeros(t.shape, t.dtype))
        if allow_unused:
            return None
        raise RuntimeError(
            f"autograd.grad: inputs[{index}]{_named(t)} (shape {t.shape}) was not used to "
            "compute the outputs, so it has no gradient (one of the differentiated Tensors "
            "appears to not have been used in the graph). Pass allow_unused=True to get None "
            "for it."
        )
    if isinstance(found, Tensor):
        return found
    return Tensor._make(np.array(found, copy=True))


def backward(
    tensors: Any,
    grad_tensors: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """`torch.autograd.backward`: the gradients of `tensors` (weighted by `grad_tensors`)
    accumulated into `.grad` of the leaves, or of `inputs` only when given."""
    tensors = _tensors(tensors, "tensors")
    grad_tensors = [None] * len(tensors) if grad_tensors is None else _as_list(grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is None:
        with np.errstate(all="ignore"):
            steps = engine.backward_steps(tensors, grad_tensors, bool(retain), create_graph)
            collections.deque(steps, maxlen=0)
        return
    inputs = _tensors(inputs, "inputs")
    found = grad(tensors, inputs, grad_tensors, retain, create_graph, allow_unused=True)
    for t, g in zip(inputs, found):
        if g is not None:
            engine.add_to_grad(t, g if create_graph else g._data)


def _as_list(value: Any) -> list:
    return list(value) if isinstance(value, Sequence) and not isinstance(value, Tensor) else [value]


def _named(t: Tensor) -> str:
    return f" {t.name!r}" if t.name else ""
