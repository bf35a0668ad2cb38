"""What a PyTorch checkpoint is made of, as this package reads and writes it: PyTorch's names
for dtypes (`torch.float32`), storage classes (`torch.FloatStorage`) and the functions a file
calls (`torch._utils._rebuild_tensor_v2`); what each means here (NumPy dtypes, or why there is
none: bfloat16, quantized and sparse tensors); and the error for a file that cannot be one.

Tables and small marker classes only: writing.py and reading.py/rebuild.py use them.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class SerializationError(RuntimeError, ValueError):
    """A file that cannot be read or written as a PyTorch checkpoint (a `RuntimeError`, as
    PyTorch raises for these, and a `ValueError`: the value given is the problem)."""


class TorchName:
    """Stands for PyTorch's object `module.name` in a pickle being written (writing.py),
    so that the file names it without PyTorch being imported."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (callable only because pickle checks that what it reduces to is; never called)
        raise TypeError(f"{self!r} stands for PyTorch's object in a file being written")


class StorageType:
    """What a storage class named in a file (`torch.FloatStorage`) means here: the dtype of its
    elements, or None with the reason it cannot be loaded."""

    def __init__(self, name: str, dtype: np.dtype | None, untyped: bool = False) -> None:
        self.name, self.dtype, self.untyped = name, dtype, untyped

    def __repr__(self) -> str:
        return f"torch.{self.name}"


class UnavailableDtype:
    """A PyTorch dtype that NumPy has no equivalent of (`torch.bfloat16`), read as a value."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name} (no NumPy equivalent, so no tinygrad_attn tensor has it)"


# (numpy dtype, PyTorch dtype name, storage class name): PyTorch writes the typed storage class
# for these, and an untyped storage plus `_rebuild_tensor_v3(..., dtype)` for the unsigned ones
# past uint8.
DTYPES = [
    (np.dtype(np.float32), "float32", "FloatStorage"),
    (np.dtype(np.float64), "float64", "DoubleStorage"),
    (np.dtype(np.float16), "float16", "HalfStorage"),
    (np.dtype(np.int8), "int8", "CharStorage"),
    (np.dtype(np.uint8), "uint8", "ByteStorage"),
    (np.dtype(np.int16), "int16", "ShortStorage"),
    (np.dtype(np.int32), "int32", "IntStorage"),
    (np.dtype(np.int64), "int64", "LongStorage"),
    (np.dtype(np.bool_), "bool", "BoolStorage"),
    (np.dtype(np.complex64), "complex64", "ComplexFloatStorage"),
    (np.dtype(np.complex128), "complex128", "ComplexDoubleStorage"),
    (np.dtype(np.uint16), "uint16", None),
    (np.dtype(np.uint32), "uint32", None),
    (np.dtype(np.uint64), "uint64", None),
]
UNAVAILABLE_DTYPES = (
    "bfloat16 complex32 float8_e4m3fn float8_e5m2 float8_e4m3fnuz float8_e5m2fnuz float8_e8m0fnu "
    "float4_e2m1fn_x2 qint8 quint8 qint32 quint4x2 quint2x4 bits1x8 bits2x4 bits4x2 bits8 bits16 "
    "uint1 uint2 uint3 uint4 uint5 uint6 uint7 int1 int2 int3 int4 int5 int6 int7"
).split()
UNAVAILABLE_STORAGES = {
    "BFloat16Storage": "bfloat16",
    "ComplexHalfStorage": "complex32",
    "QInt8Storage": "qint8 (quantized)",
    "QUInt8Storage": "quint8 (quantized)",
    "QInt32Storage": "qint32 (quantized)",
    "QUInt4x2Storage": "quint4x2 (quantized)",
    "QUInt2x4Storage": "quint2x4 (quantized)",
}
UNSUPPORTED_FUNCTIONS = {
    "torch._utils._rebuild_qtensor": "a quantized tensor",
    "torch._utils._rebuild_sparse_tensor": "a sparse tensor",
    "torch._utils._rebuild_nested_tensor": "a nested tensor",
    "torch._utils._rebuild_meta_tensor_no_storage": "a tensor on the 'meta' device (no data)",
    "torch._utils._rebuild_wrapper_subclass": "a tensor subclass",
    "torch._utils._rebuild_device_tensor_from_numpy": "a tensor of an accelerator device",
    "torch._utils._rebuild_device_tensor_from_cpu_tensor": "a tensor of an accelerator device",
    "torch.serialization._get_layout": "a sparse tensor",
}

TORCH_DTYPE = {dtype: TorchName("torch", name) for dtype, name, _ in DTYPES}
STORAGE_CLASS = {
    dtype: TorchName("torch", storage) for dtype, _, storage in DTYPES if storage is not None
}
UNTYPED_STORAGE = TorchName("torch.storage", "UntypedStorage")
REBUILD_TENSOR_V2 = TorchName("torch._utils", "_rebuild_tensor_v2")
REBUILD_TENSOR_V3 = TorchName("torch._utils", "_rebuild_tensor_v3")
REBUILD_PARAMETER = TorchName("torch._utils", "_rebuild_parameter")
TORCH_DEVICE = TorchName("torch", "device")
