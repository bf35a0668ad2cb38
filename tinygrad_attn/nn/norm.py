"""LayerNorm: normalise each position's features, then scale and shift them (learned)."""

from __future__ import annotations

from collections.abc import Sequence

from ..creation import ones, zeros
from ..functional.normalization import normalized_shape_tuple
from ..ops.layers import LayerNorm as LayerNormOp
from ..tensor import Tensor
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
    ) -> None:
        super().__init__()
        shape = normalized_shape_tuple("LayerNorm", normalized_shape)
        check_size(self, **{f"normalized_shape[{i}]": n for i, n in enumerate(shape)})
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = bool(elementwise_affine)
        self.weight = Parameter(ones(shape)) if elementwise_affine else None
        self.bias = Parameter(zeros(shape)) if elementwise_affine and bias else None

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
        affine = tuple(t for t in (self.weight, self.bias) if t is not None)
        return LayerNormOp.apply(
            x, *affine, dims=dims, eps=self.eps, has_weight=self.weight is not None
        )  # (..., *normalized_shape)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"
