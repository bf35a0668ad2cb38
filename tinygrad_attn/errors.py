"""The package's error classes where PyTorch's and Python's conventions meet.

PyTorch raises RuntimeError for most mistakes; Python code expects ValueError for a wrong shape
or value and TypeError for a wrong type. Where PyTorch raises RuntimeError, the error here
derives from both, so `except RuntimeError` in ported code and `except ValueError` /
`except TypeError` in Python code catch it alike. A dim out of range is a plain IndexError, as
in PyTorch. This module imports nothing from the package.
"""

from __future__ import annotations


class ShapeError(ValueError, RuntimeError):
    """Shapes or values that do not fit (PyTorch: RuntimeError)."""


class DTypeError(TypeError, RuntimeError):
    """A dtype the operation cannot take or give (PyTorch: RuntimeError)."""


class NotForDTypeError(NotImplementedError, TypeError):
    """An operation PyTorch has no kernel for in that dtype (`&` of floats): PyTorch's
    NotImplementedError, and a TypeError in Python's terms."""


class DeviceError(RuntimeError, ValueError):
    """A device other than the CPU (PyTorch without CUDA: RuntimeError / AssertionError)."""


class DistributedError(RuntimeError, ValueError):
    """A call that needs a process group (PyTorch: RuntimeError / ValueError "Default process
    group has not been initialized")."""


class IntegerDivisionByZero(ZeroDivisionError, RuntimeError):
    """An integer `//` or `%` by zero (PyTorch: RuntimeError "ZeroDivisionError"; NumPy would
    give 0 with a warning)."""


def dim_error(op: str, dim: object, ndim: int) -> IndexError:
    """PyTorch's IndexError for a dim out of range, naming the op and the valid range."""
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    return IndexError(
        f"{op}: dimension out of range (expected to be in range of [{low}, {high}] for a "
        f"tensor with {ndim} dimension{'s' if ndim != 1 else ''}, but got {dim})"
    )
