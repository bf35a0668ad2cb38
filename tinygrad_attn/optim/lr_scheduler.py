"""`optim.lr_scheduler`, PyTorch's module of learning-rate schedulers under its own name, so
`import tinygrad_attn.optim.lr_scheduler`, `from tinygrad_attn.optim.lr_scheduler import StepLR`
and `torch.optim.lr_scheduler.StepLR` (after `import tinygrad_attn as torch`) all work.

It defines nothing: the base is in scheduler.py, the schedules in schedules.py, cyclic.py,
combined.py and plateau.py.
"""

from .combined import ChainedScheduler, SequentialLR
from .cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .plateau import ReduceLROnPlateau
from .scheduler import EPOCH_DEPRECATION_WARNING as EPOCH_DEPRECATION_WARNING
from .scheduler import LRScheduler
from .scheduler import _LRScheduler as _LRScheduler
from .schedules import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiplicativeLR,
    MultiStepLR,
    PolynomialLR,
    StepLR,
)

__all__ = [
    "LambdaLR",
    "MultiplicativeLR",
    "StepLR",
    "MultiStepLR",
    "ConstantLR",
    "LinearLR",
    "ExponentialLR",
    "SequentialLR",
    "CosineAnnealingLR",
    "ChainedScheduler",
    "ReduceLROnPlateau",
    "CyclicLR",
    "CosineAnnealingWarmRestarts",
    "OneCycleLR",
    "PolynomialLR",
    "LRScheduler",
]
