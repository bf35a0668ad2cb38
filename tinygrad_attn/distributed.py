"""`torch.distributed` as far as a single CPU process has it: not available.

Training scripts import `init_process_group` and `destroy_process_group` at the top and call
them only when launched by `torchrun` (the RANK environment variable set). The import works
here; `is_available()` and `is_initialized()` are False; anything that would need a process
group is a clear error saying this package trains in one process.
"""

from __future__ import annotations

from typing import Any

from .errors import DistributedError

__all__ = [
    "all_reduce", "barrier", "broadcast", "destroy_process_group", "get_rank",
    "get_world_size", "init_process_group", "is_available", "is_initialized",
]  # fmt: skip

_HOW = (
    "tinygrad_attn trains in one process on the CPU: there is no process group. Run the script "
    "without torchrun (so RANK is not set) and it takes its single-process path."
)


def is_available() -> bool:
    """False: no distributed backend here."""
    return False


def is_initialized() -> bool:
    return False


def _unavailable(call: str) -> DistributedError:
    return DistributedError(f"torch.distributed.{call}: {_HOW}")


def init_process_group(*args: Any, **kwargs: Any) -> None:
    raise _unavailable("init_process_group()")


def destroy_process_group(*args: Any, **kwargs: Any) -> None:
    raise _unavailable("destroy_process_group()")


def get_rank(*args: Any, **kwargs: Any) -> int:
    raise _unavailable("get_rank()")


def get_world_size(*args: Any, **kwargs: Any) -> int:
    raise _unavailable("get_world_size()")


def barrier(*args: Any, **kwargs: Any) -> None:
    raise _unavailable("barrier()")


def all_reduce(*args: Any, **kwargs: Any) -> None:
    raise _unavailable("all_reduce()")


def broadcast(*args: Any, **kwargs: Any) -> None:
    raise _unavailable("broadcast()")
