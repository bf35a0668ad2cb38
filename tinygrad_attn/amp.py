"""`torch.amp` (and `torch.cuda.amp`) for CPU scripts: autocast and a disabled GradScaler.

Training scripts wrap their forward in `torch.amp.autocast(device_type=..., dtype=...)` and
scale the loss with a `GradScaler(enabled=(dtype == "float16"))`. On the CPU with this package
both do nothing: `autocast` computes in the tensors' own dtypes (NumPy has no bfloat16), and a
`GradScaler` is an identity (scale 1, steps the optimizer as is). Asking a scaler to be
enabled is a clear error, since float16 loss scaling is a GPU technique.
"""

from __future__ import annotations

import contextlib
from typing import Any


class autocast(contextlib.ContextDecorator):  # noqa: N801  (PyTorch's spelling)
    """A context manager (and decorator) that changes nothing: tensors keep their dtypes."""

    def __init__(self, device_type: str = "cpu", dtype: Any = None, enabled: bool = True,
                 cache_enabled: Any = None) -> None:  # fmt: skip
        self.device_type, self.dtype, self.enabled = device_type, dtype, enabled

    def __enter__(self) -> autocast:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


class GradScaler:
    """PyTorch's GradScaler when disabled: `scale(loss)` is the loss, `step(optimizer)` steps,
    `update()` and `unscale_()` do nothing."""

    def __init__(self, device: Any = "cpu", init_scale: float = 2.0**16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled: bool = True) -> None:  # noqa: E501  # fmt: skip
        if isinstance(device, bool):  # (torch.cuda.amp.GradScaler(enabled) takes it first)
            enabled, device = device, "cpu"
        if enabled:
            raise RuntimeError(
                "GradScaler(enabled=True): loss scaling is for float16 training on a GPU; "
                "tinygrad_attn runs on the CPU in float32/float64. Build it with "
                "enabled=False (what CPU scripts do: enabled=(dtype == 'float16'))."
            )
        self._enabled = False

    def is_enabled(self) -> bool:
        return False

    def scale(self, outputs: Any) -> Any:
        return outputs

    def unscale_(self, optimizer: Any) -> None:
        return None

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale: Any = None) -> None:
        return None

    def get_scale(self) -> float:
        return 1.0

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        return None
