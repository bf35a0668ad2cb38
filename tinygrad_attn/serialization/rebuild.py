"""What the names in a checkpoint mean when it is read: PyTorch's rebuild functions written
here (`_rebuild_tensor_v2` and its kin make this package's tensors and `nn.Parameter`s as views
of the storages read from the file, so tensors of one storage share memory), and `GLOBALS`, every
name a weights-only load allows with the object it stands for and whether the file may call it.

Each function checks its arguments (a damaged or hostile file gets a clear error, never an
array outside its storage). Reading the archive itself is reading.py's.
"""

from __future__ import annotations

import builtins
import collections
from typing import Any

import numpy as np

from ..creation import from_numpy
from ..nn.module import Parameter
from ..tensor import Tensor
from .checkpoint_format import (
    DTYPES,
    UNAVAILABLE_DTYPES,
    UNAVAILABLE_STORAGES,
    SerializationError,
    StorageType,
    UnavailableDtype,
)


class LoadedStorage:
    """A storage read from a file: `raw` (1-D uint8 array, its bytes; tensors are views of it)
    and `dtype`, its elements' type (uint8 for an untyped storage)."""

    def __init__(self, raw: np.ndarray, dtype: np.dtype, key: str, untyped: bool) -> None:
        self.raw, self.dtype, self.key, self.untyped = raw, dtype, key, untyped

    def cpu(self) -> LoadedStorage:
        """Already on the CPU (for `map_location=lambda storage, loc: storage.cpu()`)."""
        return self

    def cuda(self, *args: Any, **kwargs: Any) -> LoadedStorage:
        raise SerializationError(
            "ta.load: map_location moved a storage to CUDA; tinygrad_attn runs on the CPU only "
            "(use map_location='cpu')"
        )

    def __repr__(self) -> str:
        return f"<storage data/{self.key}: {self.raw.nbytes} bytes of {self.dtype}>"


def check_ints(what: str, values: Any) -> tuple:
    if not isinstance(values, (tuple, list)) or not all(
        isinstance(v, int) and not isinstance(v, builtins.bool) and v >= 0 for v in values
    ):
        raise SerializationError(
            f"ta.load: a tensor's {what} is {values!r:.80}, not non-negative ints: the file is "
            "damaged"
        )
    return tuple(values)


def _tensor_from_storage(
    storage: Any, storage_offset: Any, size: Any, stride: Any, requires_grad: Any, dtype: Any
) -> Tensor:
    """A tensor viewing `storage` (so tensors of one storage share memory)."""
    if not isinstance(storage, LoadedStorage):
        raise SerializationError(
            f"ta.load: a tensor is built on {type(storage).__name__}, not a storage: the file "
            "is damaged"
        )
    if isinstance(dtype, UnavailableDtype):
        raise SerializationError(
            f"ta.load: storage data/{storage.key} holds {dtype.name} numbers, which NumPy has no "
            "dtype for; in PyTorch, convert them before saving (t.float())"
        )
    if not isinstance(dtype, np.dtype) or dtype.kind not in "fiub":
        raise SerializationError(
            f"ta.load: storage data/{storage.key} holds {dtype} numbers; tinygrad_attn tensors "
            "hold real numbers and bools only (in PyTorch, save t.real and t.imag instead)"
        )
    (offset,) = check_ints("storage offset", (storage_offset,))
    shape = check_ints("size", size)
    strides = check_ints("stride", stride)
    if len(strides) != len(shape):
        raise SerializationError(
            f"ta.load: a tensor has size {shape} but stride {strides}: the file is damaged"
        )
    if 0 in shape:
        array = np.empty(shape, dtype)
    else:
        try:
            array = np.ndarray(
                shape,
                dtype,
                buffer=storage.raw,
                offset=offset * dtype.itemsize,
                strides=tuple(s * dtype.itemsize for s in strides),
            )
        except (ValueError, TypeError, OverflowError) as err:
            raise SerializationError(
                f"ta.load: a tensor of size {shape}, stride {strides} at offset {offset} does "
                f"not fit in storage data/{storage.key} ({storage.raw.nbytes} bytes): the file "
                f"is damaged ({err})"
            ) from None
    return from_numpy(array, requires_grad=builtins.bool(requires_grad))


def _rebuild_tensor_v2(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    backward_hooks: Any,
    metadata: Any = None,
) -> Tensor:
    """PyTorch's `torch._utils._rebuild_tensor_v2`: a tensor over a typed storage."""
    dtype = storage.dtype if isinstance(storage, LoadedStorage) else None
    return _tensor_from_storage(storage, storage_offset, size, stride, requires_grad, dtype)


def _rebuild_tensor_v3(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    backward_hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> Tensor:
    """PyTorch's `torch._utils._rebuild_tensor_v3`: the dtype is given (an untyped storage)."""
    return _tensor_from_storage(storage, storage_offset, size, stride, requires_grad, dtype)


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    """PyTorch's older `torch._utils._rebuild_tensor` (no requires_grad)."""
    return _rebuild_tensor_v2(storage, storage_offset, size, stride, False, None)


def _apply_state(obj: Tensor, state: Any) -> Tensor:
    """Attributes a file gives a tensor (PyTorch keeps a tensor's own Python attributes); one
    that would replace this package's own attribute is refused."""
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for attributes in (state, slots):
        if not attributes:
            continue
        if not isinstance(attributes, dict):
            raise SerializationError(f"ta.load: a tensor's state is {attributes!r:.80}")
        for key, value in attributes.items():
            if not isinstance(key, str) or key.startswith("_") or hasattr(type(obj), key):
                raise SerializationError(
                    f"ta.load: the file sets attribute {key!r} on a tensor, which would replace "
                    "one of tinygrad_attn's own; it is not loaded"
                )
            setattr(obj, key, value)
    return obj


def _as_parameter(data: Any, requires_grad: Any) -> Parameter:
    if not isinstance(data, Tensor):
        raise SerializationError(
            f"ta.load: a Parameter is built from {type(data).__name__}, not a tensor"
        )
    param = Parameter._make(data.numpy())  # sharing the tensor's memory
    param.requires_grad_(builtins.bool(requires_grad))
    return param


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Parameter:
    """PyTorch's `torch._utils._rebuild_parameter`: an `nn.Parameter` over `data`'s memory."""
    return _as_parameter(data, requires_grad)


def _rebuild_parameter_with_state(
    data: Any, requires_grad: Any, backward_hooks: Any, state: Any
) -> Parameter:
    """PyTorch's `torch._utils._rebuild_parameter_with_state`: a Parameter with attributes."""
    return _apply_state(_as_parameter(data, requires_grad), state)


_REBUILD_FUNCTIONS = (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_tensor)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
    """PyTorch's `torch._tensor._rebuild_from_type_v2`: a tensor with Python attributes."""
    if func not in _REBUILD_FUNCTIONS or new_type not in (Tensor, Parameter):
        raise SerializationError(
            f"ta.load: the file rebuilds a {new_type!r:.60} with {func!r:.60}; only tensors "
            "and Parameters are loaded"
        )
    if not isinstance(args, tuple):
        raise SerializationError("ta.load: a tensor's arguments are not a tuple")
    out = func(*args)
    if new_type is Parameter:
        out = _as_parameter(out, out.requires_grad)
    return _apply_state(out, state)


def _size(dims: Any = ()) -> tuple:
    """`torch.Size` read as the tuple it is."""
    return tuple(dims)


def _encode(text: Any, encoding: Any = "utf-8") -> bytes:
    """`_codecs.encode(text, 'latin1')`: how protocol 2 pickles a bytes object."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1"):
        raise SerializationError(
            f"ta.load: the file encodes {type(text).__name__} with {encoding!r}; only the "
            "latin1 form of bytes that pickle writes is read"
        )
    return text.encode("latin-1")


def _bytearray(*args: Any) -> bytearray:
    """`bytearray(...)` as pickle writes it (never from a size: that would only allocate)."""
    if args and isinstance(args[0], int):
        raise SerializationError("ta.load: the file asks for bytearray(<size>)")
    return bytearray(*args)


def _storage_types() -> dict[str, StorageType]:
    types = {
        f"torch.{storage}": StorageType(storage, dtype)
        for dtype, _, storage in DTYPES
        if storage is not None
    }
    types.update({f"torch.{name}": StorageType(name, None) for name in UNAVAILABLE_STORAGES})
    types["torch.storage.UntypedStorage"] = StorageType(
        "storage.UntypedStorage", np.dtype(np.uint8), untyped=True
    )
    return types


# name -> (object, may the file call it)
GLOBALS: dict[str, tuple[Any, bool]] = {
    "collections.OrderedDict": (collections.OrderedDict, True),
    "collections.Counter": (collections.Counter, True),
    "builtins.set": (set, True),
    "builtins.frozenset": (frozenset, True),
    "builtins.complex": (complex, True),
    "builtins.bytearray": (_bytearray, True),
    "_codecs.encode": (_encode, True),
    "torch._utils._rebuild_tensor_v2": (_rebuild_tensor_v2, True),
    "torch._utils._rebuild_tensor_v3": (_rebuild_tensor_v3, True),
    "torch._utils._rebuild_tensor": (_rebuild_tensor, True),
    "torch._utils._rebuild_parameter": (_rebuild_parameter, True),
    "torch._utils._rebuild_parameter_with_state": (_rebuild_parameter_with_state, True),
    "torch._tensor._rebuild_from_type_v2": (_rebuild_from_type_v2, True),
    "torch.Size": (_size, True),
    "torch.Tensor": (Tensor, False),
    "torch.nn.parameter.Parameter": (Parameter, False),
    **{f"torch.{name}": (dtype, False) for dtype, name, _ in DTYPES},
    **{f"torch.{name}": (UnavailableDtype(name), False) for name in UNAVAILABLE_DTYPES},
    **{name: (storage_type, False) for name, storage_type in _storage_types().items()},
}
