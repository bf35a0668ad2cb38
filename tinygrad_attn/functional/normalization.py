"""Normalisation: `layer_norm` (one fused node, `ops.layers.LayerNorm`; `layer_norm_composed`
its steps), `rms_norm` (Tensor ops) and `normalize` (unit vectors along a dim). No backward code
here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..ops.layers import LayerNorm
from ..tensor import Tensor
from ._checks import _check_float, _tensor


def layer_norm(
    x: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the trailing `normalized_shape` axes, then
    `* weight + bias` if given (biased variance, as PyTorch), in one node
    (`ops.layers.LayerNorm`). `layer_norm_composed` computes the same from primitive ops."""
    x, shape, weight, bias = _layer_norm_args("layer_norm", x, normalized_shape, weight, bias, eps)
    affine = tuple(t for t in (weight, bias) if t is not None)
    return LayerNorm.apply(
        x, *affine, dims=len(shape), eps=float(eps), has_weight=weight is not None
    )


def layer_norm_composed(
    x: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """`layer_norm` as Mean, Var, Sub, Add, Sqrt, Div (Mul, Add) nodes, for reading and
    drawing. Same arguments, same result (to rounding)."""
    x, shape, weight, bias = _layer_norm_args(
        "layer_norm_composed", x, normalized_shape, weight, bias, eps
    )
    axes = tuple(range(-len(shape), 0))
    mean = x.mean(axis=axes, keepdims=True)  # (..., 1, ..., 1)
    var = x.var(dim=axes, keepdim=True, correction=0)  # (..., 1, ..., 1), biased
    out = (x - mean) / (var + eps).sqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(
    input: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing `normalized_shape` axes, then `* weight` if
    given, as PyTorch's `F.rms_norm`; `eps` defaults to the machine epsilon of the input's
    dtype (`finfo(dtype).eps`). Written with Tensor ops (Mul, Mean, Add, Rsqrt)."""
    x, shape, weight, _ = _layer_norm_args(
        "rms_norm", input, normalized_shape, weight, None, 0.0 if eps is None else eps
    )
    eps = float(np.finfo(x.dtype).eps) if eps is None else float(eps)
    axes = tuple(range(-len(shape), 0))
    mean_square = (x * x).mean(dim=axes, keepdim=True)  # (..., 1, ..., 1)
    out = x * (mean_square + eps).rsqrt()
    return out if weight is None else out * weight


def normalized_shape_tuple(fn: str, normalized_shape: Any) -> tuple:
    """`normalized_shape` (an int, NumPy integer or a sequence of them) as a tuple of ints."""
    if isinstance(normalized_shape, (int, np.integer)) and not isinstance(normalized_shape, bool):
        return (int(normalized_shape),)
    try:
        shape = tuple(normalized_shape)
    except TypeError:
        shape = None
    if shape is None or not all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in shape
    ):
        raise TypeError(
            f"{fn}: normalized_shape must be an int or a tuple of ints (the trailing axes to "
            f"normalise), got {normalized_shape!r}"
        )
    return tuple(int(n) for n in shape)


def _layer_norm_args(
    fn: str, x: Any, normalized_shape: Any, weight: Any, bias: Any, eps: Any
) -> tuple:
    x = _tensor(x, fn)
    _check_float(x, fn)
    shape = normalized_shape_tuple(fn, normalized_shape)
    if not shape or len(shape) > x.ndim or x.shape[x.ndim - len(shape) :] != shape:
        raise ShapeError(
            f"{fn}: normalized_shape {shape} must be the trailing axes of the input, "
            f"whose shape is {x.shape}"
        )
    params = []
    for label, param in (("weight", weight), ("bias", bias)):
        if param is not None and not isinstance(param, (Tensor, np.ndarray)):
            raise TypeError(
                f"{fn}: {label} must be a Tensor (or an np.ndarray) of shape {shape}, got "
                f"{type(param).__name__}; wrap it: Tensor(values, requires_grad=True)"
            )
        param = None if param is None else _tensor(param, fn, label)
        if param is not None and tuple(param.shape) != shape:
            raise ShapeError(
                f"{fn}: {label} has shape {tuple(param.shape)}, expected normalized_shape {shape}"
            )
        params.append(param)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating, np.integer)):
        raise TypeError(f"{fn}: eps must be a float, got {type(eps).__name__}")
    return (x, shape, *params)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """input / max(||input||_p over `dim`, eps): unit vectors along `dim` (PyTorch's default
    dim is 1)."""
    input = _tensor(input, "normalize")
    return input / input.norm(p, dim=dim, keepdim=True).clamp(min=eps)
