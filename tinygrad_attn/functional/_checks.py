"""Argument checks shared by the functional forms: a Tensor from an input, a float dtype, a
reduction by name. Nothing here computes a result."""

from __future__ import annotations

import warnings
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


def legacy_reduction(size_average: Any, reduce: Any, reduction: str) -> str:
    """PyTorch's reading of the deprecated `size_average` / `reduce` flags (with its
    warning); `reduction` itself when neither is given."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    result = "mean" if size_average and reduce else "sum" if reduce else "none"
    warnings.warn(
        f"size_average and reduce args will be deprecated, please use reduction='{result}' "
        "instead.",
        UserWarning,
        stacklevel=3,
    )
    return result
