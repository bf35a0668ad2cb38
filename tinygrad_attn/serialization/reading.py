"""`ta.load`: a checkpoint in PyTorch's format to objects, and the weights-only allow-list
(`add_safe_globals`, `get_safe_globals`, `clear_safe_globals`, `safe_globals`).

It opens the file (a path, maybe memory-mapped, or a seekable binary file), says what a file
that is not a checkpoint looks like (empty, text, a plain pickle, PyTorch's legacy format,
TorchScript), reads storages from the archive as the pickle asks for them (one array per
storage, placed by `map_location`: always the CPU), and runs the pickle through weights_only.py
(`weights_only=True`) or Python's unpickler with PyTorch's names read as ours.
"""

from __future__ import annotations

import contextlib
import io
import mmap as _mmap
import os
import pickle
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..tensor_methods import device
from .checkpoint_format import (
    UNAVAILABLE_STORAGES,
    UNSUPPORTED_FUNCTIONS,
    SerializationError,
    StorageType,
)
from .rebuild import GLOBALS, LoadedStorage, check_ints
from .weights_only import WeightsOnlyReader
from .zip_archive import ArchiveError, ArchiveReader

# ----------------------------------------------------------------------------- safe globals
_safe_globals: list = []


def _safe_name(entry: Any) -> tuple[Any, str]:
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
        return entry
    module, qualname = getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)
    if module is None or qualname is None:
        raise TypeError(
            f"add_safe_globals: {entry!r} has no module and name; pass (object, 'module.name')"
        )
    return entry, f"{module}.{qualname}"


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Allow the functions and classes in `safe_globals` in a `ta.load(weights_only=True)`: the
    file may then call them and set the state of their instances. An entry is the object, or
    `(object, "module.name")` to allow it under the name the file uses."""
    for entry in safe_globals:
        _safe_name(entry)  # (checked before any is added)
    _safe_globals.extend(safe_globals)


def get_safe_globals() -> list[Any]:
    """The entries `add_safe_globals` added (a copy)."""
    return list(_safe_globals)


def clear_safe_globals() -> None:
    """Forget every entry `add_safe_globals` added."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals: list[Any]) -> Iterator[None]:
    """`with ta.serialization.safe_globals([MyConfig]):` allows those names inside the block
    only (as `add_safe_globals`, undone on leaving)."""
    before = list(_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe_globals[:] = before


# ----------------------------------------------------------------------------- loading
def _refused(module: str, name: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(
        f"ta.load(weights_only=True) refused the global {module}.{name}: a weights-only load "
        "builds tensors, storages, OrderedDict and plain containers, numbers and strings, and "
        "calls nothing else, so nothing in the file has run. If you trust where the file comes "
        "from, load it with ta.load(f, weights_only=False) (which runs what the file names); "
        f"or allow just this name: ta.serialization.add_safe_globals([{module}.{name}]) (or, "
        f"for one load, `with ta.serialization.safe_globals([{module}.{name}]):`)."
    )


def _not_representable(full_name: str) -> SerializationError:
    what = UNSUPPORTED_FUNCTIONS.get(full_name)
    if what is not None:
        return SerializationError(
            f"ta.load: the file holds {what} ({full_name}), which tinygrad_attn cannot "
            "represent; in PyTorch, save plain dense CPU tensors (t.to_dense().cpu())"
        )
    return SerializationError(
        f"ta.load: the file needs PyTorch's {full_name}, which has no tinygrad_attn "
        "equivalent. A whole PyTorch model (torch.save(model)) cannot be loaded here: in "
        "PyTorch, save model.state_dict() and load it into the same architecture here."
    )


class _Loader:
    """One `ta.load`: the archive, where its storages go (map_location), the storages read so
    far (one object per key, so tensors of one storage share memory), and the names it knows."""

    def __init__(
        self, archive: ArchiveReader, map_location: Any, mapped: _mmap.mmap | None
    ) -> None:
        self.archive = archive
        self.map_location = map_location
        self.mapped = mapped
        self.storages: dict[str, LoadedStorage] = {}
        self.moved_to_cpu: set[str] = set()  # locations other than the CPU, loaded there
        byteorder = archive.read("byteorder") if archive.has("byteorder") else None
        if byteorder not in (None, b"little", b"big"):
            raise SerializationError(f"ta.load: the byteorder record says {byteorder!r:.40}")
        self.swap = byteorder is not None and byteorder.decode() != sys.byteorder

    # ---- map_location
    def _place(self, location: str) -> None:
        """Check that `location`, mapped by map_location, is the CPU (the only device here);
        a device other than the CPU with no map_location is loaded on the CPU, with a warning."""
        target: Any = location
        if isinstance(self.map_location, dict):
            target = self.map_location.get(location, location)
            if target is not location:
                _check_cpu(target, f"map_location maps {location!r} to")
                return
        elif self.map_location is not None and not callable(self.map_location):
            return  # a cpu map_location (checked by load)
        if not _is_cpu(target):
            self.moved_to_cpu.add(str(target))

    def device(self, type: Any = "cpu", index: Any = None) -> device:  # noqa: A002
        """`torch.device(...)` in a file: the CPU, where everything here lives."""
        self._place(f"{type}:{index}" if index is not None else str(type))
        return device("cpu")

    # ---- storages
    def persistent_load(self, pid: Any) -> LoadedStorage:
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise SerializationError(f"ta.load: unknown persistent id {pid!r:.80} in the file")
        _, storage_type, key, location, numel = pid
        if isinstance(storage_type, np.dtype):  # (some writers name the dtype itself)
            storage_type = StorageType(str(storage_type), storage_type)
        if not isinstance(storage_type, StorageType) or not isinstance(key, str):
            raise SerializationError(f"ta.load: bad storage id {pid!r:.80} in the file")
        if storage_type.dtype is None:
            what = UNAVAILABLE_STORAGES.get(storage_type.name, storage_type.name)
            raise SerializationError(
                f"ta.load: storage data/{key} holds {what} numbers, which NumPy has no dtype "
                "for; in PyTorch, convert those tensors before saving (t.float())"
            )
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = self._read_storage(storage_type, key, location, numel)
        elif storage.dtype != storage_type.dtype:
            raise SerializationError(
                f"ta.load: storage data/{key} is read as {storage.dtype} and as "
                f"{storage_type.dtype}: the file is damaged"
            )
        return storage

    def _read_storage(self, kind: StorageType, key: str, location: Any, numel: Any) -> Any:
        (numel,) = check_ints("storage size", (numel,))
        if not isinstance(location, str):
            raise SerializationError(f"ta.load: storage data/{key} has location {location!r:.40}")
        name = f"data/{key}"
        nbytes = numel * kind.dtype.itemsize
        if self.archive.size(name) != nbytes:
            raise SerializationError(
                f"ta.load: record {self.archive.folder}/{name} holds "
                f"{self.archive.size(name)} bytes, but its storage is {numel} x "
                f"{kind.dtype} ({nbytes} bytes): the file is damaged"
            )
        if self.mapped is not None and nbytes:
            offset = self.archive.data_offset(name)
            if offset is None:
                raise SerializationError(
                    f"ta.load(mmap=True): record {name} is compressed, so it cannot be mapped; "
                    "load without mmap"
                )
            raw = np.frombuffer(self.mapped, np.uint8, nbytes, offset)
        else:
            raw = np.empty(nbytes, np.uint8)
            self.archive.read_into(name, raw)
        storage = LoadedStorage(raw, kind.dtype, key, kind.untyped)
        if self.swap:
            if kind.untyped:
                raise SerializationError(
                    f"ta.load: storage data/{key} is untyped and written in the other byte "
                    "order; it cannot be converted"
                )
            raw.view(kind.dtype).byteswap(inplace=True)
        if callable(self.map_location) and not isinstance(self.map_location, dict):
            moved = self.map_location(storage, location)
            if moved is None:
                self._place(location)
            elif isinstance(moved, LoadedStorage):
                storage = moved
            else:
                raise SerializationError(
                    f"ta.load: map_location returned {type(moved).__name__}; it must return "
                    "the storage it is given (storage.cpu()) or None"
                )
        else:
            self._place(location)
        return storage

    # ---- names
    def find_global(self, module: str, name: str) -> tuple[Any, bool]:
        """What `module.name` in a weights-only file stands for (refused otherwise)."""
        full_name = f"{module}.{name}"
        if full_name == "torch.device":
            return self.device, True
        known = GLOBALS.get(full_name)
        if known is not None:
            return known
        for entry in _safe_globals:
            value, safe_name = _safe_name(entry)
            if safe_name == full_name:
                return value, True
        if full_name in UNSUPPORTED_FUNCTIONS:
            raise _not_representable(full_name)
        raise _refused(module, name)


def _is_cpu(value: Any) -> bool:
    text = getattr(value, "type", value)
    return isinstance(text, str) and text.split(":")[0] == "cpu"


def _check_cpu(value: Any, what: str) -> None:
    if not _is_cpu(value):
        raise SerializationError(
            f"ta.load: {what} {value!r}; tinygrad_attn runs on NumPy, on the CPU only. Pass "
            "map_location='cpu' (or leave it out)."
        )


class _FullUnpickler(pickle.Unpickler):
    """`weights_only=False`: Python's unpickler (it imports and calls what the file names),
    with PyTorch's names read as this package's."""

    def __init__(self, file: Any, loader: _Loader, **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self._loader = loader

    def find_class(self, module: str, name: str) -> Any:
        full_name = f"{module}.{name}"
        if full_name == "torch.device":
            return self._loader.device
        known = GLOBALS.get(full_name)
        if known is not None:
            return known[0]
        if module == "torch" or module.startswith("torch."):
            raise _not_representable(full_name)
        return super().find_class(module, name)

    def persistent_load(self, pid: Any) -> Any:
        return self._loader.persistent_load(pid)


_LEGACY_MAGIC = pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2)


def _foreign_file(head: bytes, source: str) -> SerializationError:
    """The error for a file that is not a zip archive, saying what it looks like."""
    if not head:
        looks = "it is empty (0 bytes): was the save interrupted?"
    elif head.startswith(_LEGACY_MAGIC[:12]):
        looks = (
            "it is in PyTorch's legacy format (before 1.6), which is not read here; re-save it "
            "with PyTorch: torch.save(torch.load(path), new_path)"
        )
    elif head[:1] == b"\x80":
        looks = (
            "it is a plain pickle, not PyTorch's zip format; if you wrote it with pickle and "
            "trust it, read it with pickle.load"
        )
    elif head[8:9] == b"{":
        looks = "it looks like a safetensors file; read it with the safetensors package"
    else:
        looks = f"it does not start like a zip archive (its first bytes are {head[:16]!r})"
    return SerializationError(
        f"ta.load: {source} is not a checkpoint written by torch.save or ta.save: {looks}"
    )


def load(
    f: Any,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = True,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """Load what `torch.save` or `ta.save` wrote to `f` (a path or a seekable binary file).

    `weights_only=True` (the default; None means the same) reads tensors, Parameters, storages,
    OrderedDicts, plain containers, numbers and strings and runs nothing in the file; any other
    name is refused (`pickle.UnpicklingError`) unless allowed with
    `ta.serialization.add_safe_globals`. `weights_only=False` runs Python's full unpickler:
    only for files you trust (it loads whole `ta.save(model)` modules).

    Everything lands on the CPU. `map_location` may be None, "cpu", a cpu `device`, a dict
    (`{"cuda:0": "cpu"}`) or a function `(storage, location) -> storage or None`; naming
    another device is an error. Tensors PyTorch saved from another device (CUDA) are loaded on
    the CPU; with no map_location a warning says so (map_location="cpu" says it is meant).
    `mmap=True` (with a path) maps the storages from the file, copy-on-write, instead of
    reading them. Loaded tensors are writable; tensors of one storage share memory.
    """
    if weights_only is None:
        weights_only = True
    if pickle_module is not None and pickle_module is not pickle:
        raise TypeError(
            f"ta.load: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} is "
            "not supported; files are read with the standard pickle module"
        )
    unknown = set(pickle_load_args) - {"encoding", "errors"}
    if unknown:
        raise TypeError(f"ta.load: unexpected keyword arguments {sorted(unknown)}")
    if isinstance(map_location, (str, device)):
        _check_cpu(map_location, "map_location is")
    elif not (map_location is None or isinstance(map_location, dict) or callable(map_location)):
        if not _is_cpu(map_location):  # e.g. a torch.device
            _check_cpu(map_location, "map_location is")
    if isinstance(f, (str, os.PathLike)):
        source = repr(os.fspath(f))
        with open(f, "rb") as stream:
            mapped = None
            if mmap:
                head = stream.read(4)
                if head != b"PK\x03\x04":
                    raise _foreign_file(head + stream.read(12), source)
                mapped = _mmap.mmap(stream.fileno(), 0, access=_mmap.ACCESS_COPY)
                stream.seek(0)
            return _load(stream, source, map_location, mapped, weights_only, pickle_load_args)
    if mmap:
        raise TypeError(
            f"ta.load(mmap=True): f must be a path to map the file, got {type(f).__name__}"
        )
    if not (hasattr(f, "read") and hasattr(f, "seek")):
        raise TypeError(
            f"ta.load: f must be a path (str or os.PathLike) or a binary file object with "
            f"read() and seek(), got {type(f).__name__}"
        )
    if hasattr(f, "seekable") and not f.seekable():
        raise TypeError(
            "ta.load: the file object cannot seek (a pipe or a socket?); read it into "
            "io.BytesIO first"
        )
    return _load(f, "the file object", map_location, None, weights_only, pickle_load_args)


def _load(
    stream: Any,
    source: str,
    map_location: Any,
    mapped: _mmap.mmap | None,
    weights_only: bool,
    pickle_load_args: dict,
) -> Any:
    if isinstance(stream, io.TextIOBase):
        raise TypeError(f"ta.load: {source} is opened in text mode; open it with 'rb'")
    start = stream.tell()
    head = stream.read(16)
    if head[:4] != b"PK\x03\x04":
        raise _foreign_file(head, source)
    stream.seek(start)
    try:
        archive = ArchiveReader(stream)
        if archive.has("constants.pkl") or any(n.startswith("code/") for n in archive.names()):
            raise SerializationError(
                f"ta.load: {source} is a TorchScript archive (torch.jit.save), not a torch.save "
                "checkpoint; in PyTorch, torch.save(torch.jit.load(path).state_dict(), new_path)"
            )
        if not archive.has("data.pkl"):
            raise SerializationError(
                f"ta.load: {source} is a zip archive but not a torch.save checkpoint: it has no "
                f"{archive.folder}/data.pkl (its records: {archive.names()[:5]})"
            )
        loader = _Loader(archive, map_location, mapped)
        data = archive.read("data.pkl")
        if weights_only:
            reader = WeightsOnlyReader(
                data, loader.find_global, loader.persistent_load, (SerializationError, ArchiveError)
            )
            result = reader.load()
        else:
            result = _FullUnpickler(io.BytesIO(data), loader, **pickle_load_args).load()
    except ArchiveError as err:
        raise SerializationError(f"ta.load: {source} cannot be read: {err}") from None
    if loader.moved_to_cpu:
        warnings.warn(
            f"ta.load: {source} holds tensors saved on {sorted(loader.moved_to_cpu)}; "
            "tinygrad_attn runs on the CPU and loaded them there. Pass map_location='cpu' to "
            "say that is meant (and silence this warning).",
            UserWarning,
            stacklevel=3,
        )
    return result
