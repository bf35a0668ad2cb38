"""Gradient utilities that work on many parameters at once: `clip_grad_norm_`."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..tensor import Tensor

__all__ = ["clip_grad_norm_"]


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
