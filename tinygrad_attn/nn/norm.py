"""LayerNorm and RMSNorm: normalise each position's features, then scale (and shift) them
(learned)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import functional as F
from ..creation import ones, zeros
from ..errors import ShapeError
from ..functional.normalization import normalized_shape_tuple
from ..ops.layers import LayerNorm as LayerNormOp
from ..tensor import Tensor
from ..tensor_methods import check_device
from .module import Module, check_size
from .parameter import Parameter


class LayerNorm(Module):
    """`F.layer_norm` over the trailing `normalized_shape` axes (an int, NumPy integer or a
    tuple of them), with a learned `weight` (ones) and `bias` (zeros) of that shape, as
    PyTorch's: no `bias` with `bias=False`, neither with `elementwise_affine=False` (the
    attribute is then None). One graph node (`ops.layers.LayerNorm`);
    `F.layer_norm_composed` draws the steps."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_device(device)
        shape = normalized_shape_tuple("LayerNorm", normalized_shape)
        check_size(self, **{f"normalized_shape[{i}]": n for i, n in enumerate(shape)})
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = Parameter(ones(shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(zeros(shape, dtype=dtype)) if elementwise_affine and bias else None

    def forward(self, x: Tensor) -> Tensor:
        k = len(self.normalized_shape)
        if (
            not isinstance(x, Tensor)
            or x.ndim < k
            or x.shape[x.ndim - k :] != self.normalized_shape
        ):
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise ShapeError(
                f"{self._label()}: expected input of shape (..., "
                f"{', '.join(map(str, self.normalized_shape))}), got {shape}"
            )
        dims = len(self.normalized_shape)
        affine = tuple(t for t in (self.weight, self.bias) if t is not None)
        return LayerNormOp.apply(
            x, *affine, dims=dims, eps=self.eps, has_weight=self.weight is not None
        )  # (..., *normalized_shape)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine="
            f"{self.elementwise_affine}, bias={self.bias is not None}"
        )


class RMSNorm(Module):
    """`F.rms_norm` over the trailing `normalized_shape` axes, with a learned `weight` (ones)
    of that shape unless `elementwise_affine=False`, as PyTorch's `nn.RMSNorm`; `eps=None`
    takes the input dtype's machine epsilon."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_device(device)
        shape = normalized_shape_tuple("RMSNorm", normalized_shape)
        check_size(self, **{f"normalized_shape[{i}]": n for i, n in enumerate(shape)})
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = Parameter(ones(shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )
