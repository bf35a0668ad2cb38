"""LayerNorm: normalise each position's features, then scale and shift them (learned)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import functional as F
from ..creation import ones, zeros
from ..ops.layers import LayerNorm as LayerNormOp
from ..tensor import Tensor
from .module import Module, check_size


class LayerNorm(Module):
    """`F.layer_norm` over the trailing `normalized_shape` axes (an int, NumPy integer or a
    tuple of them), with a learned `weight` (ones) and `bias` (zeros) of that shape. One graph
    node (`ops.layers.LayerNorm`); `F.layer_norm_composed` draws the steps."""

    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5) -> None:
        super().__init__()
        shape = F.normalized_shape_tuple("LayerNorm", normalized_shape)
        check_size(self, **{f"normalized_shape[{i}]": n for i, n in enumerate(shape)})
        self.normalized_shape = shape
        self.eps = eps
        self.weight = ones(shape, requires_grad=True)
        self.bias = zeros(shape, requires_grad=True)

    def forward(self, x: Tensor) -> Tensor:
        k = len(self.normalized_shape)
        if (
            not isinstance(x, Tensor)
            or x.ndim < k
            or x.shape[x.ndim - k :] != self.normalized_shape
        ):
            shape = x.shape if isinstance(x, Tensor) else type(x).__name__
            raise ValueError(
                f"{self._label()}: expected input of shape (..., "
                f"{', '.join(map(str, self.normalized_shape))}), got {shape}"
            )
        dims = len(self.normalized_shape)
        return LayerNormOp.apply(
            x, self.weight, self.bias, dims=dims, eps=self.eps, has_weight=True
        )  # (..., *normalized_shape)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"
