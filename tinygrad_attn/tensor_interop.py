"""How a Tensor shows itself to Python and NumPy: `repr`, `len`, `bool`, comparisons (bool
tensors, outside the graph), `item()`, `numpy()`, `np.asarray(t)`; and PyTorch's `new_zeros`,
`new_ones`, `new_full`, `new_empty`, `new_tensor` (new leaves with this tensor's dtype). (NumPy
functions called on Tensors are numpy_protocol.py's.)

A mixin of `Tensor`, kept out of tensor.py so that the core reads as autograd alone. It holds no
autograd and imports nothing that builds the graph.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from . import ops
from . import tensor as _tensor  # (tensor.py imports this module; read at call time)
from .errors import ShapeError
from .state import get_default_dtype


class InteropMixin:
    """`Tensor`'s Python and NumPy conversions (the tensor's array is `self._data`)."""

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise ShapeError(
                f"The truth value of a tensor of shape {self.shape} (more than one element) is "
                "ambiguous; use .any() or .all(), or compare one element (t[i].item())"
            )
        return bool(self._data)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def T(self) -> Any:
        """All axes reversed, as NumPy's `.T`."""
        return ops.Transpose.apply(self, axes=None)

    def numpy(self) -> np.ndarray:
        """The underlying array (not a copy)."""
        return self._data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self._data if dtype is None else self._data.astype(dtype, copy=False)

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its number (`f"{loss:.4f}"`), as in PyTorch."""
        if self._data.ndim == 0:
            return format(self._data.item(), spec)
        return object.__format__(self, spec)

    def __index__(self) -> int:
        """A one-element integer tensor as an index (`range(t)`, `items[t]`), as in PyTorch."""
        if self._data.size != 1 or self._data.dtype.kind not in "iu":
            raise TypeError(
                f"only integer tensors of a single element can be converted to an index; this "
                f"one has shape {self.shape} and dtype {self.dtype}"
            )
        return int(self._data.reshape(()))

    def item(self) -> float | int | bool:
        """The value of a one-element tensor as a Python number."""
        if self._data.size != 1:
            raise ValueError(
                f"item(): only a one-element tensor can be converted to a Python number, but "
                f"this one has shape {self.shape} ({self._data.size} elements). Index it first "
                "(t[i].item()) or use .numpy()."
            )
        return self._data.item()

    def new_zeros(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Any:
        """A new leaf of zeros of shape `size`, with this tensor's dtype (unless `dtype`)."""
        return self.new_full(_shape(size), 0, dtype=dtype, requires_grad=requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Any:
        return self.new_full(_shape(size), 1, dtype=dtype, requires_grad=requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, requires_grad: bool = False) -> Any:
        """As `new_zeros` (never uninitialised memory here)."""
        return self.new_full(_shape(size), 0, dtype=dtype, requires_grad=requires_grad)

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, requires_grad=False) -> Any:
        data = np.full(tuple(size), fill_value, dtype=self._data.dtype if dtype is None else dtype)
        return _tensor.Tensor(data, requires_grad=requires_grad)

    def new_tensor(self, data: Any, dtype: Any = None, requires_grad: bool = False) -> Any:
        """A new leaf holding a copy of `data`, with this tensor's dtype (unless `dtype`)."""
        dtype = self._data.dtype if dtype is None else dtype
        return _tensor.Tensor(
            np.array(data._data if isinstance(data, _tensor.Tensor) else data, dtype=dtype),
            requires_grad=requires_grad,
        )

    def __repr__(self) -> str:
        body = np.array2string(self._data, precision=4, separator=", ", threshold=64)
        body = body.replace("\n", "\n       ")
        extras = []
        if self._data.dtype != get_default_dtype():
            extras.append(f"dtype={self._data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if self._name:
            extras.append(f"name={self._name!r}")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # Comparisons give bool tensors and take no part in the graph.
    def __lt__(self, other: Any) -> Any:
        return _tensor.Tensor._make(ops.arithmetic.compare("<", np.less, self._data, other))

    def __le__(self, other: Any) -> Any:
        return _tensor.Tensor._make(ops.arithmetic.compare("<=", np.less_equal, self._data, other))

    def __gt__(self, other: Any) -> Any:
        return _tensor.Tensor._make(ops.arithmetic.compare(">", np.greater, self._data, other))

    def __ge__(self, other: Any) -> Any:
        return _tensor.Tensor._make(
            ops.arithmetic.compare(">=", np.greater_equal, self._data, other)
        )

    # `==` and `!=` with what is neither a tensor, an array nor a number (None, a list, a
    # string) are Python's: `t != None` is True, `t == [1, 2]` False, as PyTorch's (`.eq()`
    # still refuses them, as PyTorch's does).
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, _COMPARABLE):
            return NotImplemented
        return _tensor.Tensor._make(ops.arithmetic.compare("==", np.equal, self._data, other))

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, _COMPARABLE):
            return NotImplemented
        return _tensor.Tensor._make(ops.arithmetic.compare("!=", np.not_equal, self._data, other))


_COMPARABLE = (InteropMixin, numbers.Number, np.ndarray, np.generic)  # (a Tensor is one)


def _shape(size: tuple) -> tuple:
    """`new_zeros(2, 3)` and `new_zeros((2, 3))` alike."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
