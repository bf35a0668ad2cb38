"""The checks of optimizer options that several optimizers share, with PyTorch's outcomes: the
same values accepted, the same exception classes (ValueError for a value out of range,
RuntimeError for flags that cannot go together), messages that name the optimizer and the option.

This module must not hold any optimizer's formula, nor keep state.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np

from ..tensor import Tensor


def as_float(value: Any) -> Any:
    """A hyperparameter as a Python number (a one-element Tensor gives its value)."""
    return value.item() if isinstance(value, Tensor) else value


def _number(owner: str, name: str, value: Any) -> Any:
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"{owner}: Tensor {name} must be 1-element, got shape {tuple(value.shape)}"
            )
        return value.item()
    if not isinstance(value, (Real, np.number)):
        raise TypeError(
            f"{owner}: {name} must be a real number, got {type(value).__name__} {value!r}"
            + (" (convert it with float(...))" if isinstance(value, str) else "")
        )
    return value


def check_min(owner: str, what: str, name: str, value: Any, nan_ok: bool = False) -> None:
    """`value` must be >= 0 (PyTorch's `Invalid <what>` ValueError). `nan_ok`: the check is
    `value < 0` in PyTorch there, so NaN passes (and the step computes NaN), as in PyTorch."""
    number = _number(owner, name, value)
    bad = number < 0 if nan_ok else not 0.0 <= number
    if bad:
        raise ValueError(f"{owner}: Invalid {what}: {number} ({name} must be >= 0)")


def check_range(owner: str, what: str, name: str, value: Any, high: float) -> None:
    """0 <= value < high (NaN refused), PyTorch's `Invalid <what>` ValueError otherwise."""
    number = _number(owner, name, value)
    if not 0.0 <= number < high:
        raise ValueError(f"{owner}: Invalid {what}: {number} ({name} must be in [0, {high}))")


def check_betas(owner: str, betas: Any) -> tuple:
    """Adam's `betas`: a pair, each in [0, 1), both floats or both Tensors (as PyTorch)."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ValueError(
            f"{owner}: betas must be a pair (beta1, beta2), e.g. (0.9, 0.999), got {betas!r}"
        )
    for i, beta in enumerate(betas):
        check_range(owner, f"beta parameter at index {i}", f"betas[{i}]", beta, 1.0)
    floats = all(isinstance(b, float) for b in betas)
    if not (floats or all(isinstance(b, Tensor) for b in betas)):
        raise ValueError(
            f"{owner}: betas must be either both floats or both Tensors, got "
            f"({type(betas[0]).__name__}, {type(betas[1]).__name__}); write e.g. (0.9, 0.999)"
            " rather than (0, 0.999)"
        )
    return tuple(betas)


def check_flags(owner: str, group: dict[str, Any]) -> None:
    """`fused`, `foreach`, `differentiable` as PyTorch checks them; `differentiable=True`, a
    step through which autograd would flow, is refused: the step here is NumPy outside the
    graph (NotImplementedError, a RuntimeError)."""
    fused, foreach = group.get("fused"), group.get("foreach")
    differentiable = group.get("differentiable", False)
    if fused and differentiable:
        raise RuntimeError(f"{owner}: `fused` does not support `differentiable`")
    if fused and foreach:
        raise RuntimeError(f"{owner}: `fused` and `foreach` cannot be `True` together.")
    if differentiable:
        raise NotImplementedError(
            f"{owner}: differentiable=True is not supported: the optimizer step here runs in "
            "NumPy outside the autograd graph, so no gradient can flow through it. Leave "
            "differentiable=False (the default)."
        )
