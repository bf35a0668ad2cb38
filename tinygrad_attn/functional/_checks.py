"""Argument checks shared by the functional forms: a Tensor from an input, a float dtype, a
reduction by name. Nothing here computes a result."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import ops  # noqa: F401  (before tensor: the package's import cycle closes in ops)
from ..errors import DTypeError
from ..tensor import Tensor


def _tensor(x: Any, fn: str, what: str = "input") -> Tensor:
    """`x` if it is a Tensor, a constant Tensor for an ndarray; otherwise a TypeError."""
    if isinstance(x, Tensor):
        return x
    if isinstance(x, np.ndarray):
        return Tensor(x)
    raise TypeError(
        f"{fn}: {what} must be a Tensor (or an np.ndarray), got {type(x).__name__}; wrap it "
        f"first: ta.tensor({x!r})"
    )


def _check_float(x: Tensor, fn: str, what: str = "input") -> None:
    if x.dtype.kind != "f":
        raise DTypeError(
            f"{fn}: {what} must be a float tensor, got dtype {x.dtype}; convert it first "
            "(e.g. Tensor(x.numpy(), dtype=np.float32))"
        )


def _reduce(loss: Tensor, reduction: str, fn: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    if reduction == "none":
        return loss
    raise ValueError(f"{fn}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
