"""PyTorch's `torch.utils` as far as this package has it: `utils.data` (datasets, samplers,
`DataLoader`) and `utils.checkpoint`. Re-exports only; nothing here touches the autograd
core."""

from . import checkpoint, data

__all__ = ["checkpoint", "data"]
