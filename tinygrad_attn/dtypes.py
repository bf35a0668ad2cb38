"""PyTorch's type promotion: the dtype of `a + b` when a and b differ.

NumPy and PyTorch agree on two operands of one kind (int32 with int64 gives int64, float16 with
float32 gives float32) and disagree on the rest, so ops that combine tensors call
`result_type` instead of letting NumPy choose:

- kinds rank bool < integer < float, and a mix of kinds takes the higher kind's dtype as it is
  (int64 with float16 gives float16; NumPy gives float64);
- operands come in three tiers: tensors with dimensions, 0-d tensors, and Python numbers. A
  lower tier changes the result only when its kind is higher: a float32 tensor with a 0-d
  float64 tensor stays float32, an int64 tensor times 0.5 gives the default float dtype
  (float32), a uint8 tensor plus 300 stays uint8 (it wraps, as in PyTorch);
- a Python float is the default float dtype (`ta.get_default_dtype()`), an int is int64, a bool
  is bool.

`operands(a, b)` is how every binary operator gets its two inputs: both as tensors of the
result's dtype (a number becomes a shared constant tensor, a tensor of another dtype is cast).

This module must not know about ops or the graph: it sees dtypes, values and tensors.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import tensor as _tensor  # (tensor.py imports this module first; read at call time)
from .state import get_default_dtype

_BOOL = np.dtype(np.bool_)
_INT64 = np.dtype(np.int64)


def kind_rank(dtype: np.dtype) -> int:
    """0 for bool, 1 for an integer dtype, 2 for a float dtype."""
    return 2 if dtype.kind == "f" else 0 if dtype.kind == "b" else 1


def promote(a: np.dtype | None, b: np.dtype | None) -> np.dtype | None:
    """The dtype two operands of one tier give (None: no operand yet)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    ra, rb = kind_rank(a), kind_rank(b)
    if ra != rb:
        return a if ra > rb else b
    return np.promote_types(a, b)


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    """A higher tier's dtype, unless the lower tier's kind is higher (then they promote)."""
    if higher is None:
        return lower
    if lower is None or kind_rank(higher) >= kind_rank(lower):
        return higher
    return promote(higher, lower)


def scalar_dtype(value: Any) -> np.dtype:
    """The dtype a Python (or NumPy) number stands for in promotion."""
    if isinstance(value, (bool, np.bool_)):
        return _BOOL
    if isinstance(value, (int, np.integer)):
        return _INT64
    if isinstance(value, (float, np.floating)):
        return get_default_dtype()
    raise TypeError(f"{type(value).__name__} {value!r} is not a real number")


def result_type(*operands: Any) -> np.dtype:
    """The dtype PyTorch gives an op of these operands (tensors, ndarrays or numbers)."""
    dims = zeros = numbers = None
    for value in operands:
        array = getattr(value, "_data", value)
        if isinstance(array, np.ndarray):
            if array.ndim:
                dims = promote(dims, array.dtype)
            else:
                zeros = promote(zeros, array.dtype)
        elif value is not None:
            numbers = promote(numbers, scalar_dtype(value))
    result = _combine(dims, _combine(zeros, numbers))
    if result is None:
        raise TypeError("result_type() needs at least one operand")
    return result


def float_result_type(*operands: Any) -> np.dtype:
    """`result_type`, made a float dtype (the default one) when the operands are all integer or
    bool: what true division and the float-only functions give (int / 2 -> float32)."""
    dtype = result_type(*operands)
    return dtype if dtype.kind == "f" else get_default_dtype()


# ------------------------------------------------------------------ operands of an op
# Python-number constants, shared: `y * 0.5` in a loop makes one constant tensor, not one per
# call. Their arrays are read-only, so sharing them is safe.
_constants: dict[tuple, Any] = {}


def constant(value: bool | int | float, dtype: np.dtype) -> Any:
    """The shared constant tensor holding the number `value` as `dtype`."""
    key = (value, type(value), dtype)
    if not value or value != value:  # 0.0 == -0.0, nan != nan: key those by their text
        key = (repr(value), type(value), dtype)
    tensor = _constants.get(key)
    if tensor is None:
        array = np.asarray(value).astype(dtype)
        array.setflags(False)  # (shared by every use: nobody may write it)
        if len(_constants) > 4096:  # many distinct numbers (a schedule): start afresh
            _constants.clear()
        tensor = _constants[key] = _tensor.Tensor._make(array)
    return tensor


def as_constant(value: Any, dtype: np.dtype | None = None) -> Any:
    """`value` as a tensor that takes no gradient: a tensor as it is (cast to `dtype` if
    given), a number as a shared constant (of `dtype`, or its own promotion dtype), an ndarray
    wrapped without a copy."""
    Tensor = _tensor.Tensor
    if isinstance(value, Tensor):
        return value if dtype is None or value._data.dtype == dtype else value.to(dtype)
    if isinstance(value, (bool, int, float, np.number, np.bool_)) and not isinstance(
        value, np.ndarray
    ):
        return constant(
            value.item() if isinstance(value, np.generic) else value,
            np.dtype(dtype) if dtype is not None else scalar_dtype(value),
        )
    array = value if isinstance(value, np.ndarray) else np.asarray(value)
    if array.dtype.kind not in "fiub":
        raise TypeError(
            f"an operand of dtype {array.dtype} ({type(value).__name__}) is not real numbers: "
            "tinygrad_attn computes with float, integer or bool arrays. Convert it first, "
            "e.g. np.asarray(value, dtype=np.float32)."
        )
    return Tensor._make(array if dtype is None else array.astype(dtype, copy=False))


def operands(a: Any, b: Any) -> tuple:
    """The two inputs of a binary op as tensors of PyTorch's result dtype."""
    Tensor = _tensor.Tensor
    if a.__class__ is Tensor:
        if b.__class__ is Tensor:
            if a._data.dtype is b._data.dtype:  # (the common case: no promotion)
                return a, b
        elif b.__class__ is float and a._data.dtype.kind == "f":  # `x * 0.5`
            return a, constant(b, a._data.dtype)
    elif a.__class__ is float and b.__class__ is Tensor and b._data.dtype.kind == "f":
        return constant(a, b._data.dtype), b
    dtype = result_type(a, b)
    return as_constant(a, dtype), as_constant(b, dtype)


def float_operands(a: Any, b: Any) -> tuple:
    """`operands`, in a float dtype: true division of integers gives the default float."""
    a, b = operands(a, b)
    if a._data.dtype.kind != "f":
        dtype = get_default_dtype()
        return as_constant(a, dtype), as_constant(b, dtype)
    return a, b
