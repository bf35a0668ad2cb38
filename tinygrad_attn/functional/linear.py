"""`linear` (one fused node, `ops.layers.Linear`) and `linear_composed`, its steps as MatMul,
Transpose and Add nodes. No backward code here."""

from __future__ import annotations

from typing import Any

from ..ops.layers import Linear
from ..tensor import Tensor
from ._checks import _tensor


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight^T + bias in one node (`ops.layers.Linear`, like PyTorch's addmm), as
    PyTorch's `F.linear`: weight `(out, in)`, bias `(out,)` or None, input `(..., in)` ->
    `(..., out)`; the leading axes are folded into one matrix product, forward and backward.
    `linear_composed` computes the same from primitive ops."""
    x, weight, bias = _linear_args("linear", x, weight, bias)
    return Linear.apply(x, weight) if bias is None else Linear.apply(x, weight, bias)


def linear_composed(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """`linear` as MatMul, Transpose and Add nodes, for reading and drawing."""
    x, weight, bias = _linear_args("linear_composed", x, weight, bias)
    out = x @ weight.T  # (..., out)
    return out if bias is None else out + bias


def _linear_args(fn: str, x: Any, weight: Any, bias: Any) -> tuple:
    x = _tensor(x, fn)
    weight = _tensor(weight, fn, "weight")
    bias = None if bias is None else _tensor(bias, fn, "bias")
    if weight.ndim != 2:
        raise ValueError(
            f"{fn}: weight must be 2-D (out_features, in_features), got shape {weight.shape}"
        )
    if x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"{fn}: input of shape {x.shape} does not fit weight {weight.shape}: the input's "
            f"last axis must be in_features={weight.shape[1]} (weight is (out, in), as PyTorch)"
        )
    if bias is not None and bias.shape != (weight.shape[0],):
        raise ValueError(
            f"{fn}: bias has shape {bias.shape}, expected ({weight.shape[0]},) "
            "(out_features, the weight's first axis)"
        )
    return x, weight, bias
