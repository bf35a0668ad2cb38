"""PyTorch's typed tensor names and dtype information: `torch.FloatTensor(...)`,
`torch.LongTensor(...)`, ..., `torch.finfo(dtype)`, `torch.iinfo(dtype)`.

`ta.LongTensor([1, 2])` makes an int64 tensor of those values and `ta.FloatTensor(2, 3)` a
(2, 3) float32 tensor (of zeros: never uninitialised memory), as the legacy constructors do;
`isinstance(t, ta.FloatTensor)` asks for the dtype. `finfo`/`iinfo` are NumPy's (whose fields
carry PyTorch's names: eps, max, min, tiny, smallest_normal, resolution, bits). This module
makes tensors through the public constructors and holds no op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .state import get_default_dtype
from .tensor import Tensor


class _TypedMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype


class _Typed(metaclass=_TypedMeta):
    """`LongTensor(data)` / `LongTensor(*sizes)`: a Tensor of this dtype."""

    dtype = np.dtype(np.float32)

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        if kwargs.pop("device", None) not in (None, "cpu"):
            raise RuntimeError(f"{cls.__name__}: tinygrad_attn runs on the CPU only")
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected arguments {sorted(kwargs)}")
        if not args:
            return Tensor(np.zeros(0, cls.dtype))
        if all(isinstance(a, (int, np.integer)) and not isinstance(a, bool) for a in args):
            return Tensor(np.zeros(tuple(int(a) for a in args), cls.dtype))  # sizes
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                data = data.numpy()
            return Tensor(np.asarray(data).astype(cls.dtype))
        raise TypeError(f"{cls.__name__}: pass data (a list, an array) or sizes (ints)")


def _typed(name: str, dtype: Any) -> type:
    return _TypedMeta(name, (_Typed,), {"dtype": np.dtype(dtype), "__module__": __name__})


FloatTensor = _typed("FloatTensor", np.float32)
DoubleTensor = _typed("DoubleTensor", np.float64)
HalfTensor = _typed("HalfTensor", np.float16)
LongTensor = _typed("LongTensor", np.int64)
IntTensor = _typed("IntTensor", np.int32)
ShortTensor = _typed("ShortTensor", np.int16)
CharTensor = _typed("CharTensor", np.int8)
ByteTensor = _typed("ByteTensor", np.uint8)
BoolTensor = _typed("BoolTensor", np.bool_)


def finfo(dtype: Any = None) -> np.finfo:
    """Facts about a float dtype (the default one without an argument): `eps`, `max`, `min`,
    `tiny`, `smallest_normal`, `resolution`, `bits`."""
    dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"finfo: {dtype} is not a floating point dtype; use iinfo")
    return np.finfo(dtype)


def iinfo(dtype: Any) -> np.iinfo:
    """Facts about an integer dtype: `max`, `min`, `bits`."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise TypeError(f"iinfo: {dtype} is not an integer dtype; use finfo")
    return np.iinfo(dtype)
