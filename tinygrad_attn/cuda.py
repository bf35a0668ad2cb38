"""`torch.cuda` as a PyTorch built without CUDA has it: no devices.

Scripts ask `torch.cuda.is_available()` (False here) and pick the CPU; `device_count()` is 0;
the seeding and synchronising calls do nothing, as there is nothing to seed or wait for.
Anything that would need a GPU is a clear error saying this package runs on the CPU.
`cuda.amp.GradScaler` is the disabled scaler that CPU scripts build (`enabled=False`).
"""

from __future__ import annotations

from typing import Any

from . import amp as amp  # noqa: PLC0414  (torch.cuda.amp)
from .errors import DeviceError


def is_available() -> bool:
    """False: tinygrad_attn runs on NumPy, on the CPU."""
    return False


def device_count() -> int:
    return 0


def is_bf16_supported(*args: Any, **kwargs: Any) -> bool:
    return False


def manual_seed(seed: int) -> None:
    """Nothing to seed (no GPU); `ta.manual_seed` seeds the CPU generator."""


def manual_seed_all(seed: int) -> None:
    """Nothing to seed (no GPU)."""


def synchronize(device: Any = None) -> None:
    """Nothing to wait for (no GPU)."""


def empty_cache() -> None:
    """Nothing to free (no GPU)."""


def _no_gpu(*args: Any, **kwargs: Any) -> Any:
    raise DeviceError(
        "torch.cuda: tinygrad_attn runs on NumPy, on the CPU only; there is no CUDA device. "
        "Check ta.cuda.is_available() (False) and use device='cpu'."
    )


current_device = get_device_name = get_device_properties = set_device = _no_gpu
memory_allocated = max_memory_allocated = reset_peak_memory_stats = _no_gpu
