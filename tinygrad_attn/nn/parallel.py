"""`torch.nn.parallel` for a CPU-only package: `DataParallel` and `DistributedDataParallel`.

`DataParallel` with no GPU is what PyTorch makes of it on a machine without CUDA: a wrapper that
calls its module (held as `.module`, so its `state_dict` keys start with "module.").
`DistributedDataParallel` needs a process group, which one CPU process does not have
(`ta.distributed`): building one is a clear error, so a script that imports it at the top
still runs its single-process path.
"""

from __future__ import annotations

from typing import Any

from ..errors import DistributedError
from ..tensor_methods import check_device
from .module import Module


class DataParallel(Module):
    """`module` run as it is (no devices to split the batch over); `.module` is the module."""

    def __init__(
        self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0
    ) -> None:
        super().__init__()
        for device in (*(device_ids or ()), output_device):
            if device is not None and not isinstance(device, int):
                check_device(device)
        self.module = module
        self.dim = dim

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Refused: it needs `torch.distributed.init_process_group`, which is not available."""

    def __init__(self, module: Module, *args: Any, **kwargs: Any) -> None:
        raise DistributedError(
            "DistributedDataParallel: there is no process group (torch.distributed is not "
            "available in tinygrad_attn, which trains in one process on the CPU). Use the "
            "module itself; scripts take that path when RANK is not set."
        )
