"""Linear: y = x @ W^T + b, with PyTorch's shapes and initialisation, as one fused node."""

from __future__ import annotations

import math

from .. import functional as F
from ..creation import from_numpy
from ..ops.layers import Linear as LinearOp
from ..state import get_default_dtype, get_rng
from ..tensor import Tensor
from .module import Module, check_size
from .parameter import Parameter


class Linear(Module):
    """y = x @ weight.T + bias; `weight` is (out_features, in_features), as in PyTorch.

    Both are drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)) with the global generator
    (`ta.manual_seed`), in the default float dtype. Input `(..., in_features)` ->
    `(..., out_features)`. One graph node (`ops.layers.Linear`, as `F.linear`); with
    `composed=True` the layer records Transpose, MatMul and Add nodes instead
    (`F.linear_composed`), the same numbers with every step drawn, as the article's head does.
    """

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, *, composed: bool = False
    ) -> None:
        super().__init__()
        self.composed = bool(composed)
        check_size(self, in_features=in_features, out_features=out_features)
        self.in_features = in_features
        self.out_features = out_features
        bound = 1 / math.sqrt(in_features)
        dtype = get_default_dtype()
        rng = get_rng()
        weight = rng.uniform(-bound, bound, (out_features, in_features)).astype(dtype)
        self.weight = Parameter(from_numpy(weight))  # (out, in)
        self.bias = None
        if bias:
            self.bias = Parameter(
                from_numpy(rng.uniform(-bound, bound, out_features).astype(dtype))
            )  # (out,)

    def forward(self, x: Tensor) -> Tensor:
        self._check_width(x, self.in_features)
        if self.composed:
            return F.linear_composed(x, self.weight, self.bias)  # (..., out)
        if self.bias is None:
            return LinearOp.apply(x, self.weight)  # (..., out)
        return LinearOp.apply(x, self.weight, self.bias)  # (..., out)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )  # (PyTorch's repr exactly; `composed` only changes how the graph is drawn)
