"""PyTorch's checkpoint container: a zip archive whose records all sit in one folder
(`model/data.pkl`, `model/data/0`, ...), stored uncompressed, each record's bytes starting on a
64-byte boundary of the file so that a loader can map them into memory as they are.

`ArchiveWriter` writes the layout PyTorch's writer (miniz, as `torch.save` drives it) writes, byte
for byte apart from the first half of `.data/serialization_id`: a local header whose extra field
'FB' pads the record to the boundary, the bytes, a data descriptor (CRC and sizes) after each
non-empty record, the central directory, then zip64's end records and the classic one. Sizes or
offsets past 4 GiB take zip64's extra fields. `ArchiveReader` reads such an archive with the
standard library's `zipfile`, and finds where each record's bytes start (for memory mapping).

This module knows records and bytes only, never pickles or tensors (writing.py, reading.py);
every failure to read comes out as an `ArchiveError` with a message a person can act on, never
as an error from inside `zipfile`.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from typing import Any, BinaryIO

ALIGNMENT = 64  # record bytes start on a multiple of this (PyTorch's .storage_alignment)
_ZIP64_LIMIT = 0xFFFFFFFF  # sizes and offsets from here on need zip64 fields
_SERIALIZATION_ID = ".data/serialization_id"

_LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # signature ... name length, extra length
_CENTRAL_HEADER = struct.Struct("<IHHHHHHIIIHHHHHII")
_DESCRIPTOR_32 = struct.Struct("<IIII")
_DESCRIPTOR_64 = struct.Struct("<IIQQ")
_ZIP64_END = struct.Struct("<IQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<IIQI")
_END = struct.Struct("<IHHHHIIH")
_UTF8_AND_DESCRIPTOR = 0x0808  # general purpose flags: names are UTF-8; sizes follow the data
_UTF8 = 0x0800


class ArchiveError(Exception):
    """The bytes are not a readable PyTorch zip archive (reading.py says which file)."""


def _hash_combine(seed: int, value: int) -> int:
    """c10::hash_combine on 64 bits: how PyTorch folds record CRCs into the serialization id."""
    mask = (1 << 64) - 1
    return (seed ^ ((value + 0x9E3779B9 + ((seed << 6) & mask) + (seed >> 2)) & mask)) & mask


class ArchiveWriter:
    """Writes records into PyTorch's zip layout under `folder/`, to a binary stream `out`
    (only `out.write` is called; offsets count from where the archive starts, as PyTorch's).

    Call `write_record(name, data)` for each record in order, then `close()`, which adds
    `.data/serialization_id` and the directories. `data` is any C-contiguous bytes-like object
    (bytes, memoryview, a 1-D uint8 ndarray); it is written without a copy.
    """

    def __init__(self, out: BinaryIO, folder: str) -> None:
        self._out = out
        self._folder = folder
        self._position = 0
        self._entries: list[tuple[bytes, int, int, int]] = []  # (name, crc, size, offset)
        self._combined_crc = 0  # PyTorch's running hash of the descriptors' CRCs
        self._names_hash = 0

    def _write(self, data: Any) -> None:
        view = memoryview(data).cast("B")
        written = self._out.write(view)
        if written is not None and written != len(view):
            raise OSError(f"ta.save: the stream took {written} of {len(view)} bytes")
        self._position += len(view)

    def write_record(self, name: str, data: Any) -> None:
        """Append record `folder/name` holding `data`, its bytes aligned to ALIGNMENT."""
        full_name = f"{self._folder}/{name}".encode()
        size = memoryview(data).nbytes
        crc = zlib.crc32(data) if size else 0
        offset = self._position
        big, far = size >= _ZIP64_LIMIT, offset >= _ZIP64_LIMIT
        # zip64's extra field in the local header (before the padding) when a number overflows
        zip64 = b""
        if big or far:
            fields = (struct.pack("<QQ", size, size) if big else b"") + (
                struct.pack("<Q", offset) if far else b""
            )
            zip64 = struct.pack("<HH", 0x0001, len(fields)) + fields
        start = offset + _LOCAL_HEADER.size + len(full_name) + len(zip64) + 4
        padding = -start % ALIGNMENT
        extra = zip64 + b"FB" + struct.pack("<H", padding) + b"Z" * padding
        flags = _UTF8_AND_DESCRIPTOR if size else _UTF8
        local_size = 0xFFFFFFFF if big else 0
        self._write(
            _LOCAL_HEADER.pack(
                0x04034B50,
                45 if zip64 else 0,
                flags,
                0,
                0,
                0,
                0,
                local_size,
                local_size,
                len(full_name),
                len(extra),
            )  # fmt: skip
            + full_name
            + extra
        )
        self._write(data)
        if size:  # an empty record has no descriptor (its header's zeros are its numbers)
            if zip64:
                self._write(_DESCRIPTOR_64.pack(0x08074B50, crc, size, size))
            else:
                self._write(_DESCRIPTOR_32.pack(0x08074B50, crc, size, size))
            self._combined_crc = _hash_combine(self._combined_crc, crc)
        self._names_hash = _hash_combine(self._names_hash, zlib.crc32(name.encode()))
        self._entries.append((full_name, crc, size, offset))

    def close(self) -> None:
        """Add `.data/serialization_id`, the central directory and the end records."""
        # Twenty digits from the record names, twenty from the records' CRCs. PyTorch computes
        # the second half the same way; its first half hashes the names with the C++ library's
        # string hash in a hash set's order, which is not reproducible here, so it is our own.
        serialization_id = f"{self._names_hash:020d}{self._combined_crc:020d}"
        self.write_record(_SERIALIZATION_ID, serialization_id.encode())
        directory_start = self._position
        for full_name, crc, size, offset in self._entries:
            big, far = size >= _ZIP64_LIMIT, offset >= _ZIP64_LIMIT
            fields = (struct.pack("<QQ", size, size) if big else b"") + (
                struct.pack("<Q", offset) if far else b""
            )
            extra = struct.pack("<HH", 0x0001, len(fields)) + fields if fields else b""
            shown_size = 0xFFFFFFFF if big else size
            self._write(
                _CENTRAL_HEADER.pack(
                    0x02014B50,
                    0,
                    45 if extra else 0,
                    _UTF8_AND_DESCRIPTOR if size else _UTF8,
                    0,
                    0,
                    0,
                    crc,
                    shown_size,
                    shown_size,
                    len(full_name),
                    len(extra),
                    0,
                    0,
                    0,
                    0,
                    0xFFFFFFFF if far else offset,
                )  # fmt: skip
                + full_name
                + extra
            )
        directory_size = self._position - directory_start
        zip64_end = self._position
        count = len(self._entries)
        self._write(
            _ZIP64_END.pack(
                0x06064B50,
                _ZIP64_END.size - 12,
                0x031E,
                45,
                0,
                0,
                count,
                count,
                directory_size,
                directory_start,
            )  # fmt: skip
        )
        self._write(_ZIP64_LOCATOR.pack(0x07064B50, 0, zip64_end, 1))
        self._write(
            _END.pack(
                0x06054B50,
                0,
                0,
                min(count, 0xFFFF),
                min(count, 0xFFFF),
                min(directory_size, 0xFFFFFFFF),
                min(directory_start, 0xFFFFFFFF),
                0,
            )  # fmt: skip
        )


class ArchiveReader:
    """The records of a PyTorch zip archive read from a seekable binary stream.

    `folder` is the archive's folder (the part of the first record's name before '/', as
    PyTorch's reader takes it); records are named relative to it.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        try:
            self._zip = zipfile.ZipFile(stream)
            infos = self._zip.infolist()
        except zipfile.BadZipFile as err:
            raise ArchiveError(
                f"it is not a complete zip archive ({err}); a file cut short (an interrupted "
                "save or download) looks like this"
            ) from None
        except (EOFError, OSError, ValueError, struct.error) as err:
            raise ArchiveError(f"its zip directory cannot be read ({err})") from None
        if not infos:
            raise ArchiveError("the zip archive holds no records")
        first = infos[0].filename
        if "/" not in first:
            raise ArchiveError(
                f"its records are not inside one folder as a checkpoint's are (the first is "
                f"{first!r}): it is some other zip archive"
            )
        self.folder = first.split("/", 1)[0]
        prefix = self.folder + "/"
        self._infos = {
            info.filename[len(prefix) :]: info for info in infos if info.filename.startswith(prefix)
        }

    def names(self) -> list[str]:
        """The record names, relative to the folder, in the archive's order."""
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def size(self, name: str) -> int:
        return self._info(name).file_size

    def _info(self, name: str) -> zipfile.ZipInfo:
        try:
            return self._infos[name]
        except KeyError:
            raise ArchiveError(f"the record {self.folder}/{name} is missing") from None

    def read(self, name: str) -> bytes:
        """A record's bytes (CRC checked)."""
        try:
            return self._zip.read(self._info(name))
        except ArchiveError:
            raise
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error) as err:
            raise ArchiveError(f"the record {self.folder}/{name} is damaged ({err})") from None

    def data_offset(self, name: str) -> int | None:
        """Where record `name`'s bytes start in the stream, or None if they are compressed."""
        info = self._info(name)
        if info.compress_type != zipfile.ZIP_STORED:
            return None
        try:
            self._stream.seek(info.header_offset)
            header = self._stream.read(_LOCAL_HEADER.size)
            signature, *_, name_length, extra_length = _LOCAL_HEADER.unpack(header)
        except (OSError, struct.error) as err:
            raise ArchiveError(f"the header of {self.folder}/{name} is damaged ({err})") from None
        if signature != 0x04034B50:
            raise ArchiveError(f"the header of {self.folder}/{name} is damaged (bad signature)")
        return info.header_offset + _LOCAL_HEADER.size + name_length + extra_length

    def read_into(self, name: str, out: Any) -> None:
        """Fill the writable buffer `out` (exactly the record's size) with record `name`,
        reading a stored record straight from the stream; its CRC is checked."""
        info = self._info(name)
        view = memoryview(out).cast("B")
        offset = self.data_offset(name)
        if offset is None:
            view[:] = self.read(name)
            return
        self._stream.seek(offset)
        filled = 0
        while filled < len(view):
            count = self._stream.readinto(view[filled:])
            if not count:
                raise ArchiveError(
                    f"the record {self.folder}/{name} ends early ({filled} of {len(view)} "
                    "bytes): the file is cut short"
                )
            filled += count
        if zlib.crc32(view) != info.CRC:
            raise ArchiveError(f"the record {self.folder}/{name} is damaged (CRC mismatch)")

    def close(self) -> None:
        self._zip.close()
