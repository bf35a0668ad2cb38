"""Op-table rows for the fused layer ops (ops/layers.py): Linear, LayerNorm, GELU and
CrossEntropy called as ops, and `F.linear` with the composed twins of all four
(`F.linear_composed`, `F.layer_norm_composed`, `F.gelu_composed`, `F.cross_entropy_composed`).

Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ... import functional as F
from ...ops.layers import GELU, CrossEntropy, LayerNorm, Linear
from ...tensor import Tensor
from ..opspec import LOGITS, SPREAD, Case, Choices, OpSpec, Values, register, shape_text
from .elementwise import np_erf
from .softmax import np_log_softmax


def np_gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np_erf(x / np.sqrt(2)))


def np_layer_norm(
    x: np.ndarray, *affine: np.ndarray, normalized_shape: tuple, eps: float = 1e-5
) -> np.ndarray:
    axes = tuple(range(-len(normalized_shape), 0))
    centred = x - x.mean(axis=axes, keepdims=True)
    out = centred / np.sqrt((centred**2).mean(axis=axes, keepdims=True) + eps)
    if affine:
        out = out * affine[0]
    return out + affine[1] if len(affine) > 1 else out


def np_linear(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray) -> np.ndarray:
    out = np.einsum("...i,oi->...o", x, weight)  # (..., out)
    return out + bias[0] if bias else out


def np_cross_entropy(
    logits: np.ndarray,
    target: np.ndarray,
    reduction: str = "mean",
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
    weight: np.ndarray | None = None,
) -> np.ndarray:
    """PyTorch's cross-entropy of class indices, class axis last, from its definition."""
    log_probs = np_log_softmax(logits, axis=-1)  # (..., C)
    classes = logits.shape[-1]
    weight = np.ones(classes) if weight is None else weight
    kept = target != ignore_index  # target's shape
    safe = np.where(kept, target, 0)
    nll = -np.take_along_axis(log_probs, safe[..., None], axis=-1)[..., 0]
    smooth = -(log_probs * weight).sum(axis=-1) / classes
    loss = (1 - label_smoothing) * weight[safe] * nll + label_smoothing * smooth
    loss = np.where(kept, loss, 0.0)
    if reduction == "none":
        return loss
    return loss.sum() / (weight[safe] * kept).sum() if reduction == "mean" else loss.sum()


# ------------------------------------------------------------------------------------ Linear
def _linear_op(x: Tensor, weight: Tensor, *bias: Tensor) -> Tensor:
    return Linear.apply(x, weight, *bias)


def _linear_case(label: str, x_shape: tuple, out: int, bias: bool) -> Case:
    inputs = (Values(x_shape), Values((out, x_shape[-1])))
    return Case(label, inputs + ((Values((out,)),) if bias else ()), {})


LINEAR_CASES = (
    _linear_case("(4,5) -> 3, bias", (4, 5), 3, True),
    _linear_case("(2,3,5) -> 4, batch axes folded, bias", (2, 3, 5), 4, True),
    _linear_case("(5,) one row -> 2, bias", (5,), 2, True),
    _linear_case("(2,1,3,4) -> 2, no bias", (2, 1, 3, 4), 2, False),
    Case(
        "(3,4) constant input, weight and bias learn",
        (Values((3, 4), requires_grad=False), Values((2, 4)), Values((2,))),
        {},
    ),
)


def _generate_linear(c: Choices) -> Case:
    x_shape = (*c.shape(max_dims=2, max_side=3), c.integer(1, 4))
    return _linear_case("", x_shape, c.integer(1, 4), c.flag())


# --------------------------------------------------------------------------------- LayerNorm
def _layer_norm_op(x: Tensor, *affine: Tensor, dims: int, eps: float, has_weight: bool) -> Tensor:
    return LayerNorm.apply(x, *affine, dims=dims, eps=eps, has_weight=has_weight)


def _np_layer_norm_op(
    x: np.ndarray, *affine: np.ndarray, dims: int, eps: float, has_weight: bool
) -> np.ndarray:
    weight = affine[0] if has_weight else np.ones(x.shape[x.ndim - dims :])
    bias = affine[-1] if len(affine) > has_weight else np.zeros_like(weight)
    return np_layer_norm(x, weight, bias, normalized_shape=x.shape[x.ndim - dims :], eps=eps)


def _layer_norm_case(label: str, shape: tuple, dims: int, affine: str, eps: float = 1e-5):
    features = Values(shape[len(shape) - dims :])
    params = {"dims": dims, "eps": eps, "has_weight": "weight" in affine}
    inputs = (Values(shape, SPREAD),) + (features,) * (("weight" in affine) + ("bias" in affine))
    return Case(label, inputs, params)


def _generate_layer_norm(c: Choices) -> Case:
    # At least 4 features: over 1 or 2 the normalisation is degenerate (see functional's rows).
    shape = (*c.shape(max_dims=2, max_side=3), c.integer(4, 6))
    affine = c.pick(("weight+bias", "weight", "bias", ""))
    return _layer_norm_case("", shape, c.integer(1, len(shape)), affine)


# -------------------------------------------------------------------------------------- GELU
def _gelu_op(x: Tensor, approximate: str) -> Tensor:
    return GELU.apply(x, approximate=approximate)


def _generate_gelu(c: Choices) -> Case:
    return Case("", (Values(c.shape()),), {"approximate": c.pick(("none", "tanh"))})


GELU_CASES = tuple(
    Case(f"{shape_text(s)} approximate={a}", (Values(s),), {"approximate": a})
    for s in ((3, 4), ())
    for a in ("none", "tanh")
)


# ------------------------------------------------------------------------------ CrossEntropy
def _cross_entropy_op(logits: Tensor, **params: Any) -> Tensor:
    return CrossEntropy.apply(logits, **params)


def _cross_entropy_composed(logits: Tensor, **params: Any) -> Tensor:
    weight = params.pop("weight", None)
    weight = None if weight is None else Tensor(weight, dtype=logits.dtype)
    return F.cross_entropy_composed(logits, weight=weight, axis=-1, **params)  # class axis last


def _ce_case(label: str, batch: tuple, classes: int, target: Any, **options: Any) -> Case:
    params = {"target": np.asarray(target), "reduction": "mean", **options}
    return Case(label, (Values((*batch, classes), LOGITS),), params)


CROSS_ENTROPY_CASES = (
    _ce_case("(4,5) mean", (4,), 5, [0, 4, 2, 2]),
    _ce_case("(2,3,5) (B,T,C) sum", (2, 3), 5, [[1, 0, 4], [4, 4, 2]], reduction="sum"),
    _ce_case("(3,2) none", (3,), 2, [1, 1, 0], reduction="none"),
    _ce_case("(5,) one row, 0-d target", (), 5, 3),
    _ce_case("(2,3,4) ignore_index=-100 on one position", (2, 3), 4, [[1, 3, -100], [0, 2, 2]]),
    _ce_case("(4,3) ignore_index=2, none", (4,), 3, [2, 0, 2, 1], ignore_index=2, reduction="none"),
    _ce_case("(4,5) label_smoothing=0.2", (4,), 5, [0, 4, 2, 2], label_smoothing=0.2),
    _ce_case("(4,5) class weights", (4,), 5, [0, 4, 2, 2], weight=np.array([1, 2, 0.5, 3, 1.5])),
    _ce_case(
        "(2,3,4) class weights, smoothing 0.2, ignored",
        (2, 3),
        4,
        [[1, -100, 0], [3, 3, 2]],
        weight=np.array([0.5, 2.0, 1.0, 3.0]),
        label_smoothing=0.2,
    ),
    _ce_case(
        "(2,3,4) smoothing 0.1 and ignored, sum",
        (2, 3),
        4,
        [[1, -100, 0], [3, 3, -100]],
        label_smoothing=0.1,
        reduction="sum",
    ),
)


def _generate_cross_entropy(c: Choices) -> Case:
    batch = c.shape(max_dims=2)
    classes = c.integer(1, 5)
    target = c.index_array(batch, classes)
    if target.size and c.flag():
        target = target.copy()
        target.flat[0] = -100  # ignored
    return _ce_case(
        "",
        batch,
        classes,
        target,
        reduction=c.pick(("mean", "sum", "none")) if (target != -100).any() else "sum",
        label_smoothing=c.pick((0.0, 0.25)),
    )


for name, fn, reference, cases, generate, where, doc in (
    ("Linear", _linear_op, np_linear, LINEAR_CASES, _generate_linear, "ops.layers", ""),
    ("F.linear", F.linear, np_linear, LINEAR_CASES, _generate_linear, "functional", ""),
    (
        "F.linear_composed",
        F.linear_composed,
        np_linear,
        LINEAR_CASES,
        _generate_linear,
        "functional",
        "x @ W.T + b from MatMul, Transpose, Add",
    ),
    (
        "LayerNorm",
        _layer_norm_op,
        _np_layer_norm_op,
        (
            _layer_norm_case("(2,3,4) over 1 axis, weight and bias", (2, 3, 4), 1, "weight+bias"),
            _layer_norm_case("(2,3,4) over 2 axes, weight and bias", (2, 3, 4), 2, "weight+bias"),
            _layer_norm_case("(3,5) no affine", (3, 5), 1, ""),
            _layer_norm_case("(3,4) weight only, eps=0.1", (3, 4), 1, "weight", eps=0.1),
            _layer_norm_case("(4,) one row, bias only", (4,), 1, "bias"),
        ),
        _generate_layer_norm,
        "ops.layers",
        "",
    ),
    ("GELU", _gelu_op, np_gelu, GELU_CASES, _generate_gelu, "ops.layers", "erf and tanh forms"),
    (
        "F.gelu_composed",
        F.gelu_composed,
        np_gelu,
        GELU_CASES,
        _generate_gelu,
        "functional",
        "GELU from Mul, Add, Erf/Tanh",
    ),
    (
        "CrossEntropy",
        _cross_entropy_op,
        np_cross_entropy,
        CROSS_ENTROPY_CASES,
        _generate_cross_entropy,
        "ops.layers",
        "log-softmax + NLL in one node; weight, ignore_index, label_smoothing",
    ),
    (
        "F.cross_entropy_composed",
        _cross_entropy_composed,
        np_cross_entropy,
        CROSS_ENTROPY_CASES,
        _generate_cross_entropy,
        "functional",
        "LogSoftmax, indexing, Neg, reduction",
    ),
):
    register(OpSpec(name, fn, reference, cases, generate, where, doc))


def _layer_norm_composed(x: Tensor, *affine: Tensor, normalized_shape: tuple, eps: float = 1e-5):
    return F.layer_norm_composed(x, normalized_shape, *affine, eps=eps)


def _generate_layer_norm_composed(c: Choices) -> Case:
    shape = (c.integer(1, 3), c.integer(4, 6))
    return Case("", (Values(shape, SPREAD), Values(shape[1:])), {"normalized_shape": shape[1:]})


register(
    OpSpec(
        "F.layer_norm_composed",
        _layer_norm_composed,
        np_layer_norm,
        (
            Case(
                "(2,3,4) over (3,4), weight and bias",
                (Values((2, 3, 4), SPREAD), Values((3, 4)), Values((3, 4))),
                {"normalized_shape": (3, 4)},
            ),
            Case(
                "(3,5) over (5,), no affine", (Values((3, 5), SPREAD),), {"normalized_shape": (5,)}
            ),
        ),
        _generate_layer_norm_composed,
        "functional",
        "Mean, Var, Sub, Add, Sqrt, Div, Mul",
    )
)
