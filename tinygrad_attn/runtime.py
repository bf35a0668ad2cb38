"""PyTorch's process-level switches, as they are for a CPU-only NumPy engine.

`torch.compile(model)` returns the model as it is (there is no compiler: every op already runs
NumPy's kernels, and the graph stays readable); `set_float32_matmul_precision` and the thread
settings are accepted. Each is here so that a training script runs with only its imports
changed; none of them changes a result.
"""

from __future__ import annotations

import os
from typing import Any

_precision = "highest"


def compile(model: Any = None, **options: Any) -> Any:  # noqa: A001  (PyTorch's name)
    """`torch.compile`: the model (or function) itself; as a decorator factory without one."""
    if model is None:
        return lambda fn: fn
    return model


def set_float32_matmul_precision(precision: str) -> None:
    global _precision
    if precision not in ("highest", "high", "medium"):
        raise ValueError(f"set_float32_matmul_precision: unknown precision {precision!r}")
    _precision = precision


def get_float32_matmul_precision() -> str:
    return _precision


def get_num_threads() -> int:
    return os.cpu_count() or 1


def set_num_threads(n: int) -> None:
    """Accepted (NumPy's BLAS reads its own environment variables at start-up)."""
