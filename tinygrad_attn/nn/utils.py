"""Utilities over many parameters at once, as `torch.nn.utils`: `clip_grad_norm_`,
`clip_grad_value_` (gradients changed in place), `parameters_to_vector` and
`vector_to_parameters` (all the parameters as one flat tensor, and back)."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from .. import versions
from ..creation import cat
from ..errors import ShapeError
from ..tensor import Tensor

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "parameters_to_vector",
    "vector_to_parameters",
]


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor,
    max_norm: float,
    norm_type: float = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale every `.grad` in place by min(1, max_norm / (norm + 1e-6)), the norm taken over
    all of them together, as `torch.nn.utils.clip_grad_norm_`: a NaN or infinite norm makes
    every gradient NaN (PyTorch's answer), or, with `error_if_nonfinite=True`, an error.
    Returns the norm before clipping (a 0-d Tensor)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p._grad._data for p in params if p._grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return Tensor(0.0)
    if math.isinf(norm_type):
        each = [np.max(np.abs(g)) if g.size else 0.0 for g in grads]
        total = float(np.max(each)) if norm_type > 0 else float(np.min(each))
    else:
        each = [np.sum(np.abs(g.astype(np.float64)) ** norm_type) for g in grads]
        total = float(np.sum(each)) ** (1 / norm_type)
    if error_if_nonfinite and not math.isfinite(total):
        raise RuntimeError(
            f"clip_grad_norm_: the total norm of order {norm_type} of the gradients is "
            f"{total}, so they cannot be clipped. Set error_if_nonfinite=False to go on (every "
            "gradient then becomes NaN), or find where the NaN or inf comes from "
            "(ta.detect_anomaly())."
        )
    coef = min(float(max_norm) / (total + 1e-6), 1.0) if not math.isnan(total) else math.nan
    for g in grads:
        g *= coef  # (in place, as PyTorch's mul_: coef 1.0 leaves them as they are)
    return Tensor(total, dtype=grads[0].dtype)


def clip_grad_value_(
    parameters: Iterable[Tensor] | Tensor, clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp every `.grad` in place to [-clip_value, clip_value], as
    `torch.nn.utils.clip_grad_value_` (a NaN stays NaN; gradients that are None are skipped).
    `foreach=True` is PyTorch's error on the CPU."""
    if foreach:
        raise RuntimeError(
            "clip_grad_value_: foreach=True was passed, but the foreach API is not available "
            "for cpu tensors (as in PyTorch on the CPU); leave foreach=None"
        )
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    for p in params:
        if p._grad is not None:
            grad = p._grad._data
            np.clip(grad, -clip_value, clip_value, out=grad)
            versions.bump(grad)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """All the parameters flattened and joined into one 1-D tensor (a copy, in the graph:
    gradients flow back to each parameter), as `torch.nn.utils.parameters_to_vector`."""
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Give each parameter, in order, the next `p.numel()` values of `vec`, as
    `torch.nn.utils.vector_to_parameters`: like PyTorch, `p.data` becomes a view of `vec`, so
    the parameters share `vec`'s memory afterwards."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        if pointer + n > vec.numel():
            raise ShapeError(
                f"vector_to_parameters: vec has {vec.numel()} elements, fewer than the "
                f"parameters need (at least {pointer + n}); make it with parameters_to_vector"
            )
        p.data = vec[pointer : pointer + n].view_as(p).data
        pointer += n
