"""`torch.backends` as a CPU-only PyTorch has it: flags scripts set (`cudnn.benchmark`,
`cuda.matmul.allow_tf32`) are accepted and change nothing; `mps.is_available()` is False."""

from . import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
