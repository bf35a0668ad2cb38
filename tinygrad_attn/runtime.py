"""PyTorch's process-level switches, as they are for a CPU-only NumPy engine.

`torch.compile(model)` returns the model as it is (there is no compiler: every op already runs
NumPy's kernels, and the graph stays readable); `set_float32_matmul_precision` is accepted;
`set_num_threads` / `get_num_threads` set and read the thread count of NumPy's bundled OpenBLAS.
Each is here so that a training script runs with only its imports changed.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .tensor_methods import check_device, device

_precision = "highest"


def get_default_device() -> device:
    """`torch.get_default_device()`: the CPU, the only device here."""
    return device("cpu")


def set_default_device(device: Any) -> None:
    """`torch.set_default_device("cpu")` is accepted; any other device is a clear error."""
    check_device(device)


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


def openblas_threads() -> tuple[Callable[[], int] | None, Callable[[int], None] | None]:
    """The get/set thread-count functions of the OpenBLAS NumPy ships with (wheels from PyPI),
    or (None, None) for any other BLAS."""
    libs = glob.glob(os.path.join(os.path.dirname(np.__file__), os.pardir, "numpy.libs", "*"))
    lib = None
    for path in libs:
        if "openblas" in os.path.basename(path):
            with contextlib.suppress(OSError):
                lib = ctypes.CDLL(path)  # already loaded by NumPy: the same library
            break
    get = getattr(lib, "scipy_openblas_get_num_threads64_", None)
    set_ = getattr(lib, "scipy_openblas_set_num_threads64_", None)
    return (get, set_) if get is not None and set_ is not None else (None, None)


def get_num_threads() -> int:
    """How many threads the matrix products use (NumPy's OpenBLAS), as `torch.get_num_threads`."""
    get, _ = openblas_threads()
    return int(get()) if get is not None else (os.cpu_count() or 1)


class _ThreadCountError(ValueError, RuntimeError):
    """A thread count that is not a positive int (PyTorch raises RuntimeError)."""


def set_num_threads(n: int) -> None:
    """Use `n` threads for the matrix products from now on, as `torch.set_num_threads`: NumPy's
    OpenBLAS is told directly (its environment variable is read only at start-up). With another
    BLAS nothing changes, and a warning says so."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise _ThreadCountError(f"set_num_threads expects a positive integer, got {n!r}")
    _, set_ = openblas_threads()
    if set_ is None:
        warnings.warn(
            "set_num_threads: NumPy's BLAS here is not the OpenBLAS its wheels bundle, so its "
            "thread count cannot be changed from Python; set OPENBLAS_NUM_THREADS (or your "
            "BLAS's variable) before starting Python",
            RuntimeWarning,
            stacklevel=2,
        )
        return
    set_(int(n))
