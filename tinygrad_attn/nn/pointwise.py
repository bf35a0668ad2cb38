"""More parameter-free layers under PyTorch's names: SiLU, LeakyReLU, ELU, SELU, CELU, Mish,
Softplus, Hardtanh, ReLU6, Hardsigmoid, Hardswish, LogSigmoid, Softsign, Tanhshrink, Threshold,
GLU, Tanh, Sigmoid, Softmax, Softmin, LogSoftmax, Flatten, Unflatten, Identity,
PairwiseDistance, CosineSimilarity. Each calls the `F` function (or Tensor
method) of the same name with its options; `inplace=True` writes into the input, as PyTorch's.
No maths here.
"""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensor import Tensor
from .module import Module


class Identity(Module):
    """Returns its input (a placeholder layer)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Tensor) -> Tensor:
        return x


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class _Activation(Module):
    """A layer that calls `F.<name>(x, inplace=...)`: the function is the class's `function`."""

    function: Any = None

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return type(self).function(x, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _OverDim(Module):
    """A layer that calls `F.<name>(x, dim)`, the function being the class's `function`; with
    no dim, PyTorch's deprecated implicit choice and its warning."""

    function: Any = None

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return type(self).function(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class SiLU(_Activation):
    """x * sigmoid(x)."""

    function = staticmethod(F.silu)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if max_val <= min_val:
            raise ValueError(
                f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})"
            )
        self.min_val, self.max_val = min_val, max_val
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else ""
        )


class Softmax(_OverDim):
    """`F.softmax(x, dim)`."""

    function = staticmethod(F.softmax)


class Flatten(Module):
    """Merge axes `start_dim`..`end_dim` into one (PyTorch's default keeps the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class LogSoftmax(_OverDim):
    """`F.log_softmax(x, dim)`."""

    function = staticmethod(F.log_softmax)


class ReLU6(_Activation):
    function = staticmethod(F.relu6)


class Hardsigmoid(_Activation):
    function = staticmethod(F.hardsigmoid)

    def extra_repr(self) -> str:  # (PyTorch's shows no inplace here)
        return ""


class Hardswish(_Activation):
    function = staticmethod(F.hardswish)

    def extra_repr(self) -> str:
        return ""


class SELU(_Activation):
    function = staticmethod(F.selu)


class Mish(_Activation):
    function = staticmethod(F.mish)


class CELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.celu(x, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class LogSigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.logsigmoid(x)


class Softsign(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.softsign(x)


class Tanhshrink(Module):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanhshrink(x)


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.threshold(x, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + (
            ", inplace=True" if self.inplace else ""
        )


class GLU(Module):
    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_OverDim):
    """`F.softmin(x, dim)`."""

    function = staticmethod(F.softmin)


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size` (Flatten's inverse)."""

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class PairwiseDistance(Module):
    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CosineSimilarity(Module):
    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return F.cosine_similarity(x1, x2, self.dim, self.eps)
