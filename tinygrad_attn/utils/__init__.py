"""PyTorch's `torch.utils` as far as this package has it: `utils.data` (datasets, samplers,
`DataLoader`). Re-exports only; nothing here touches the autograd core."""

from . import data

__all__ = ["data"]
