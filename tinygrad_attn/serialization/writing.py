"""`ta.save`: an object to PyTorch's checkpoint format.

A pickler that names PyTorch's functions and classes without importing them turns every tensor
(and every ndarray of numbers) into `torch._utils._rebuild_tensor_v2(storage, offset, size,
stride, requires_grad, hooks)` over a storage written as a persistent id; arrays over the same
memory share one storage (found through their chain of NumPy bases), each at its own offset and
strides; then the records go into the zip archive in PyTorch's order (zip_archive.py).

It reads tensors and never changes them: no maths, no gradients.
"""

from __future__ import annotations

import builtins
import collections
import io
import os
import pickle
import sys
from typing import Any

import numpy as np

from ..creation import from_numpy
from ..nn.module import Parameter
from ..tensor import Tensor
from ..tensor_methods import device
from .checkpoint_format import (
    REBUILD_PARAMETER,
    REBUILD_TENSOR_V2,
    REBUILD_TENSOR_V3,
    STORAGE_CLASS,
    TORCH_DEVICE,
    TORCH_DTYPE,
    UNTYPED_STORAGE,
    SerializationError,
    TorchName,
)
from .zip_archive import ALIGNMENT, ArchiveWriter


class _SavedStorage:
    """One storage of the file being written: `data` (1-D uint8 array, the bytes of record
    `data/<key>`), the dtype of its elements and PyTorch's class for it."""

    def __init__(self, data: np.ndarray, dtype: np.dtype) -> None:
        self.data, self.dtype = data, dtype
        self.untyped = dtype not in STORAGE_CLASS
        self.torch_type = UNTYPED_STORAGE if self.untyped else STORAGE_CLASS[dtype]
        # an untyped storage counts bytes, a typed one elements
        self.numel = data.nbytes if self.untyped else data.nbytes // dtype.itemsize


class _MemoryWindow:
    """Exposes bytes [address, address + nbytes) of an existing allocation as a read-only uint8
    array (`np.asarray(window)`), keeping `owner` alive: a storage may span more memory than any
    one array over it shows (a view saved alone saves its whole base, as in PyTorch)."""

    def __init__(self, address: int, nbytes: int, owner: Any) -> None:
        self.__array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (address, True),
            "version": 3,
        }
        self.owner = owner


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _byte_bounds(array: np.ndarray) -> tuple[int, int]:
    """[low, high) of the bytes `array` can reach."""
    low = high = _address(array)
    if array.size == 0:
        return low, low
    for n, stride in zip(array.shape, array.strides):
        if stride < 0:
            low += stride * (n - 1)
        else:
            high += stride * (n - 1)
    return low, high + array.itemsize


def _memory_root(array: np.ndarray) -> np.ndarray:
    """The last ndarray down `array`'s chain of bases: the one whose memory its views share."""
    root = array
    while True:
        base = root.base
        if not isinstance(base, np.ndarray):
            # np.lib.stride_tricks.as_strided puts a holder between a view and the array it
            # views; the holder keeps that array as its own `base`
            base = getattr(base, "base", None)
            if not isinstance(base, np.ndarray):
                return root
        root = base


def _contiguous_strides(shape: tuple) -> tuple:
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


class _TorchPickler(pickle._Pickler):
    """Python's pure-Python pickler taught PyTorch's names (C's cannot write a global without
    importing it): tensors and number arrays reduce to `_rebuild_tensor_v2` over storages
    written as persistent ids, `nn.Parameter` to `_rebuild_parameter`, NumPy scalars to Python
    numbers, dtypes and devices to PyTorch's. Every storage it meets is in `storages`, by key."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file: Any, protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[str, _SavedStorage] = {}
        self._keys: dict[int, str] = {}  # id(storage) -> its key, one str object each (memo)
        self._by_root: dict[int, tuple[np.ndarray, _SavedStorage]] = {}

    # ---- what becomes what
    def save(self, obj: Any, save_persistent_id: bool = True) -> None:
        if isinstance(obj, np.generic) and obj.dtype.kind in "biuf":
            obj = obj.item()
        elif isinstance(obj, np.dtype) and obj in TORCH_DTYPE:
            obj = TORCH_DTYPE[obj]
        super().save(obj, save_persistent_id)

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Parameter):
            data = from_numpy(obj.numpy())  # the same memory, as PyTorch's `param.data`
            return REBUILD_PARAMETER, (data, builtins.bool(obj.requires_grad), _hooks())
        if isinstance(obj, Tensor):
            return self._tensor(obj.numpy(), builtins.bool(obj.requires_grad))
        if isinstance(obj, np.ndarray) and obj.dtype.newbyteorder("=") in TORCH_DTYPE:
            return self._tensor(obj, False)
        if isinstance(obj, device):
            # a str object of its own, as PyTorch's device writes one (the pickle memoizes str
            # objects, so sharing the 'cpu' of the storages would change the bytes)
            return TORCH_DEVICE, (obj.type.encode().decode(),)
        return NotImplemented

    def persistent_id(self, obj: Any) -> Any:
        if type(obj) is not _SavedStorage:
            return None
        key = self._keys.get(id(obj))
        if key is None:
            key = self._keys[id(obj)] = str(len(self._keys))
            self.storages[key] = obj
        return ("storage", obj.torch_type, key, "cpu", obj.numel)

    def _save_torch_name(self, obj: TorchName) -> None:
        # as pickle's save_global writes a global it could import
        if self.proto >= 4:
            self.save(obj.module)
            self.save(obj.name)
            self.write(pickle.STACK_GLOBAL)
        else:
            self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    dispatch[TorchName] = _save_torch_name

    # ---- tensors onto storages
    def _tensor(self, array: np.ndarray, requires_grad: bool) -> tuple:
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        storage, offset, stride = self._storage_of(array)
        args = (storage, offset, tuple(array.shape), stride, requires_grad, _hooks())
        if storage.untyped:
            return REBUILD_TENSOR_V3, (*args, TORCH_DTYPE[array.dtype])
        return REBUILD_TENSOR_V2, args

    def _storage_of(self, array: np.ndarray) -> tuple[_SavedStorage, int, tuple]:
        """The storage `array` lives in (shared with every array over the same memory), its
        offset and its strides there, in elements."""
        dtype, itemsize = array.dtype, array.dtype.itemsize
        if array.size:
            root = _memory_root(array)
            low, high = _byte_bounds(root)
            start, end = _byte_bounds(array)
            at = _address(array)
            fits = (
                low <= start
                and end <= high
                and (at - low) % itemsize == 0
                and (high - low) % itemsize == 0
                and all(s >= 0 and s % itemsize == 0 for s in array.strides)
            )
            if fits:
                entry = self._by_root.get(id(root))
                if entry is None:
                    window = np.asarray(_MemoryWindow(low, high - low, root))
                    entry = self._by_root[id(root)] = (root, _SavedStorage(window, dtype))
                storage = entry[1]
                if storage.dtype != dtype:
                    raise SerializationError(
                        f"ta.save: two arrays over the same memory have different dtypes "
                        f"({storage.dtype} and {dtype}); PyTorch's format gives a storage one "
                        "dtype. Save a copy of one of them (t.clone())."
                    )
                if array.flags.c_contiguous:
                    stride = _contiguous_strides(array.shape)
                else:
                    stride = tuple(s // itemsize for s in array.strides)
                return storage, (at - low) // itemsize, stride
        # NumPy-only layouts (negative strides, unaligned views) and empty arrays: a storage of
        # their own holding a C-contiguous copy
        copy = np.ascontiguousarray(array)
        storage = _SavedStorage(copy.reshape(-1).view(np.uint8), dtype)
        return storage, 0, _contiguous_strides(array.shape)


def _hooks() -> collections.OrderedDict:
    """The backward-hooks argument PyTorch writes for every tensor: always empty."""
    return collections.OrderedDict()


def _folder_name(path: str) -> str:
    """The archive's folder, as PyTorch names it: the file name without its last extension."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return stem or "archive"


def save(
    obj: Any,
    f: Any,
    pickle_module: Any = pickle,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
) -> None:
    """Save `obj` to `f` (a path or a binary file object) in PyTorch's zip format, as
    `torch.save`: `torch.load(f, weights_only=True)` reads it when `obj` is tensors, state dicts
    and plain containers, numbers and strings. Tensors that share memory share one storage in
    the file (a view saved alone saves its whole base, as in PyTorch); `requires_grad` is kept,
    `.grad` and hooks are not. NumPy arrays of numbers are written as tensors, NumPy scalars as
    Python numbers. Anything else is pickled as `pickle` does (`ta.load(..., weights_only=False)`
    reads it back)."""
    if pickle_module is not None and pickle_module is not pickle:
        raise TypeError(
            f"ta.save: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} is "
            "not supported; the file's pickle is written with the standard pickle module"
        )
    if not _use_new_zipfile_serialization:
        raise SerializationError(
            "ta.save: _use_new_zipfile_serialization=False (PyTorch's pre-1.6 format) is not "
            "written here; leave it out to write the zip format every PyTorch since 1.6 reads"
        )
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(
            f"ta.save: pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL}, got "
            f"{pickle_protocol!r}"
        )
    pickled = io.BytesIO()
    pickler = _TorchPickler(pickled, pickle_protocol)
    pickler.dump(obj)  # before the file is opened: a failure leaves an old file as it was
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as out:
            _write_archive(out, _folder_name(os.fspath(f)), pickled, pickler.storages)
    elif hasattr(f, "write"):
        _write_archive(f, "archive", pickled, pickler.storages)
    else:
        raise TypeError(
            f"ta.save: f must be a path (str or os.PathLike) or a binary file object with "
            f"write(), got {type(f).__name__}"
        )


def _write_archive(
    out: Any, folder: str, pickled: io.BytesIO, storages: dict[str, _SavedStorage]
) -> None:
    writer = ArchiveWriter(out, folder)
    writer.write_record("data.pkl", pickled.getbuffer())
    writer.write_record(".format_version", b"1")
    writer.write_record(".storage_alignment", str(ALIGNMENT).encode())
    writer.write_record("byteorder", sys.byteorder.encode())
    for key, storage in storages.items():
        writer.write_record(f"data/{key}", storage.data)
    writer.write_record("version", b"3\n")
    writer.close()
