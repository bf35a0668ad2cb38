"""Parameter-free layers: ReLU, GELU, Dropout (modules so they can sit in a Sequential)."""

from __future__ import annotations

import numpy as np

from .. import functional as F
from ..tensor import Tensor
from .module import Module


class ReLU(Module):
    """max(x, 0); with `inplace=True` written into the input, which is returned (as
    PyTorch's)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class GELU(Module):
    """`F.gelu(x, approximate)`: exact erf form by default, `approximate="tanh"` as GPT-2."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"  # (PyTorch's repr, "none" included)


class Dropout(Module):
    """`F.dropout(x, p, training=self.training)`: active after `train()`, identity after
    `eval()`."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace
        if isinstance(p, bool) or not isinstance(p, (int, float, np.integer, np.floating)):
            raise TypeError(f"Dropout: p must be a number in [0, 1], got {type(p).__name__}")
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout: p must be in [0, 1] (as in PyTorch), got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        return F.dropout(x, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
