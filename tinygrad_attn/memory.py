"""An opt-in allocator setting for training loops: keep freed memory in the process.

A training step allocates and frees the same large arrays every time. With glibc's default
malloc settings, freed blocks of a few hundred KiB or more go back to the OS and the next step
takes a page fault for every 4 KiB of them again (at the medium benchmark size about 15,000
faults, a fifth of the step). `keep_freed_memory()` tells glibc to keep them.

It is opt-in, never done on import: it changes the allocator of the whole process (memory that
any library frees stays with the process), which is the program's decision, not a library's.
The same can be had without code through glibc's environment variables, e.g.
`MALLOC_MMAP_THRESHOLD_=33554432 MALLOC_TRIM_THRESHOLD_=1073741824 python train.py`.
Nothing else in the package imports this module.
"""

from __future__ import annotations

import ctypes
import sys

_M_TRIM_THRESHOLD = -1  # glibc's malloc.h
_M_MMAP_THRESHOLD = -3


def keep_freed_memory(mmap_threshold: int = 32 << 20, trim_threshold: int = 1 << 30) -> bool:
    """Ask glibc's malloc to serve blocks below `mmap_threshold` bytes (32 MiB, the highest
    value glibc's own adaptive threshold reaches on 64-bit) from its heap, and to give free
    heap memory back to the OS only beyond `trim_threshold` bytes (1 GiB). Returns True if
    glibc accepted both, False where there is no glibc `mallopt` (macOS, Windows, musl), in
    which case nothing changed."""
    for name, value in (("mmap_threshold", mmap_threshold), ("trim_threshold", trim_threshold)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"keep_freed_memory: {name} must be a positive int, got {value!r}")
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process runs on
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    mmap_threshold, trim_threshold = min(mmap_threshold, 2**31 - 1), min(trim_threshold, 2**31 - 1)
    return (
        mallopt(_M_MMAP_THRESHOLD, mmap_threshold) == 1
        and mallopt(_M_TRIM_THRESHOLD, trim_threshold) == 1
    )
