"""Gradient utilities that work on many parameters at once: `clip_grad_norm_`."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..tensor import Tensor

__all__ = ["clip_grad_norm_"]


def clip_grad_norm_(
    parameters: Iterable[Tensor] | Tensor, max_norm: float, norm_type: float = 2.0
) -> Tensor:
    """Scale every `.grad` in place so that their joint norm is at most `max_norm`, as
    `torch.nn.utils.clip_grad_norm_` (factor max_norm / (norm + 1e-6), only when below 1).
    Returns the norm before clipping (a 0-d Tensor)."""
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    norm_type = float(norm_type)
    if not grads:
        return Tensor(0.0)
    if math.isinf(norm_type):
        total = max(float(np.max(np.abs(g))) if g.size else 0.0 for g in grads)
    else:
        total = sum(float(np.sum(np.abs(g) ** norm_type)) for g in grads) ** (1 / norm_type)
    coef = float(max_norm) / (total + 1e-6)
    if coef < 1:
        for p in params:
            if p.grad is not None:
                p.grad = p.grad * coef  # a new array: the engine may still hold the old one
    return Tensor(total, dtype=grads[0].dtype)
