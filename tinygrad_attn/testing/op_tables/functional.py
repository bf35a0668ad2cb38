"""Op-table rows for the functional composites (`F.*`, functional.py): activations, losses,
layer norm, dropout and attention written with Tensor ops.

Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ... import functional as F
from ...state import manual_seed
from ...tensor import Tensor
from ..opspec import (
    AWAY_FROM_ZERO,
    BOOL,
    REAL,
    SPREAD,
    Case,
    Choices,
    Domain,
    OpSpec,
    Values,
    register,
    shape_text,
)
from .attention import np_attention
from .elementwise import np_erf, np_relu, np_sigmoid, unary
from .softmax import np_log_softmax, np_softmax, softmax_spec


def np_gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np_erf(x / math.sqrt(2)))


def _np_cross_entropy(
    logits: np.ndarray, target: np.ndarray, reduction: str, axis: int | None = None
) -> np.ndarray:
    axis = (0 if logits.ndim == 1 else 1) if axis is None else axis  # PyTorch's class axis
    log_probs = np.moveaxis(np_log_softmax(logits, axis=axis), axis, -1)  # (..., C)
    picked = np.take_along_axis(log_probs, target[..., None], axis=-1)[..., 0]  # target's shape
    return _np_reduce(-picked, reduction)


def _np_mse_loss(pred: np.ndarray, target: np.ndarray, reduction: str) -> np.ndarray:
    return _np_reduce((pred - target) ** 2, reduction)


def _np_reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    return {"mean": np.mean, "sum": np.sum}.get(reduction, np.asarray)(loss)


def np_layer_norm(
    x: np.ndarray, *affine: np.ndarray, normalized_shape: tuple, eps: float = 1e-5
) -> np.ndarray:
    axes = tuple(range(-len(normalized_shape), 0))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps)
    if affine:
        out = out * affine[0]
    if len(affine) > 1:
        out = out + affine[1]
    return out


def _layer_norm(x: Tensor, *affine: Tensor, normalized_shape: tuple, eps: float = 1e-5) -> Tensor:
    return F.layer_norm(x, normalized_shape, *affine, eps=eps)


def _dropout(x: Tensor, p: float, training: bool, seed: int) -> Tensor:
    # Seeding the global generator first makes the mask the same on every call, which
    # gradcheck (many forwards of one function) needs.
    manual_seed(seed)
    return F.dropout(x, p, training)


def _np_dropout(x: np.ndarray, p: float, training: bool, seed: int) -> np.ndarray:
    """The documented recipe: keep where a uniform draw of the seeded generator is >= p."""
    if not training or p == 0:
        return x
    keep = np.random.default_rng(seed).random(x.shape) >= p
    return x * keep / (1 - p)


def _np_attention_default_scale(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *mask: np.ndarray,
    is_causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return np_attention(q, k, v, *mask, scale=scale, is_causal=is_causal)


def _np_attention_weights(
    q: np.ndarray,
    k: np.ndarray,
    *mask: np.ndarray,
    is_causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    # The weights are attention with the identity as values: P @ I = P.
    eye = np.broadcast_to(np.eye(k.shape[-2]), (*k.shape[:-1], k.shape[-2]))
    return _np_attention_default_scale(q, k, eye, *mask, is_causal=is_causal, scale=scale)


def _functional_unary(name: str, fn: Callable, reference: Callable, domain: Domain) -> OpSpec:
    spec = unary(name, fn, reference, domain)
    return OpSpec(name, fn, reference, spec.cases[:2], spec.generate, "functional")


register(_functional_unary("F.relu", F.relu, np_relu, AWAY_FROM_ZERO))
register(_functional_unary("F.sigmoid", F.sigmoid, np_sigmoid, REAL))
register(_functional_unary("F.tanh", F.tanh, np.tanh, REAL))
register(
    OpSpec(
        "F.softmax",
        F.softmax,
        np_softmax,
        (Case("(2,3,4) axis=1", (Values((2, 3, 4)),), {"axis": 1}),),
        softmax_spec("", F.softmax, np_softmax).generate,
        "functional",
    )
)
register(
    OpSpec(
        "F.log_softmax",
        F.log_softmax,
        np_log_softmax,
        (Case("(2,3,4) axis=-1", (Values((2, 3, 4)),), {"axis": -1}),),
        softmax_spec("", F.log_softmax, np_log_softmax).generate,
        "functional",
    )
)


def _generate_gelu(c: Choices) -> Case:
    return Case("", (Values(c.shape()),), {"approximate": c.pick(("none", "tanh"))})


register(
    OpSpec(
        "F.gelu",
        F.gelu,
        np_gelu,
        tuple(
            Case(f"{shape_text(s)} approximate={a}", (Values(s),), {"approximate": a})
            for s in ((3, 4), ())
            for a in ("none", "tanh")
        ),
        _generate_gelu,
        "functional",
    )
)


def _cross_entropy_case(label: str, shape: tuple, target: Any, reduction: str, **axis: int):
    return Case(
        label, (Values(shape),), {"target": np.asarray(target), "reduction": reduction, **axis}
    )


def _generate_cross_entropy(c: Choices) -> Case:
    batch = c.shape(max_dims=2)
    classes = c.integer(1, 5)
    return Case(
        "",
        (Values((*batch, classes)),),
        {
            "target": c.index_array(batch, classes),
            "reduction": c.pick(("mean", "sum", "none")),
            "axis": -1,  # (the shapes drawn are class-last)
        },
    )


register(
    OpSpec(
        "F.cross_entropy",
        F.cross_entropy,
        _np_cross_entropy,
        (
            _cross_entropy_case("(4,5) mean", (4, 5), [0, 4, 2, 2], "mean"),
            _cross_entropy_case("(2,5,3) (N,C,d) mean", (2, 5, 3), [[1, 0, 4], [4, 4, 2]], "mean"),
            _cross_entropy_case(
                "(2,3,5) (B,T,C) axis=-1 sum", (2, 3, 5), [[1, 0, 4], [4, 4, 2]], "sum", axis=-1
            ),
            _cross_entropy_case("(3,2) none", (3, 2), [1, 1, 0], "none"),
            _cross_entropy_case("(5,) one row, 0-d target", (5,), 3, "mean"),
        ),
        _generate_cross_entropy,
        "functional",
        "class axis 1 (axis= another); integer targets",
    )
)


def _generate_mse_loss(c: Choices) -> Case:
    shape = c.shape()
    return Case("", (Values(shape), Values(shape)), {"reduction": c.pick(("mean", "sum", "none"))})


register(
    OpSpec(
        "F.mse_loss",
        F.mse_loss,
        _np_mse_loss,
        tuple(
            Case(f"(3,4) {r}", (Values((3, 4)), Values((3, 4))), {"reduction": r})
            for r in ("mean", "sum", "none")
        )
        + (
            Case(
                "(3,4) constant target",
                (Values((3, 4)), Values((3, 4), requires_grad=False)),
                {"reduction": "mean"},
            ),
        ),
        _generate_mse_loss,
        "functional",
    )
)


def layer_norm_shape(c: Choices) -> tuple:
    # At least 4 features: over 1 or 2 the normalisation is degenerate (a constant, or the
    # sign of the difference), with gradients that are pure rounding noise.
    return (*c.shape(max_dims=2, max_side=3), c.integer(4, 6))


def _generate_layer_norm(c: Choices) -> Case:
    shape = layer_norm_shape(c)
    normalized = shape[len(shape) - c.integer(1, len(shape)) :]
    affine = tuple(Values(normalized) for _ in range(c.integer(0, 2)))
    return Case("", (Values(shape, SPREAD), *affine), {"normalized_shape": normalized})


register(
    OpSpec(
        "F.layer_norm",
        _layer_norm,
        np_layer_norm,
        (
            Case(
                "(2,3,4) over (4,), weight and bias",
                (Values((2, 3, 4), SPREAD), Values((4,)), Values((4,))),
                {"normalized_shape": (4,)},
            ),
            Case(
                "(2,3,4) over (3,4), weight and bias",
                (Values((2, 3, 4), SPREAD), Values((3, 4)), Values((3, 4))),
                {"normalized_shape": (3, 4)},
            ),
            Case(
                "(3,5) over (5,), no affine", (Values((3, 5), SPREAD),), {"normalized_shape": (5,)}
            ),
            Case(
                "(3,4) over (4,), eps=0.1, weight only",
                (Values((3, 4), SPREAD), Values((4,))),
                {"normalized_shape": (4,), "eps": 0.1},
            ),
        ),
        _generate_layer_norm,
        "functional",
    )
)


def _generate_dropout(c: Choices) -> Case:
    params = {"p": c.pick((0.0, 0.25, 0.5)), "training": c.flag(), "seed": c.integer(0, 9)}
    return Case("", (Values(c.shape()),), params)


register(
    OpSpec(
        "F.dropout",
        _dropout,
        _np_dropout,
        (
            Case("(4,5) p=0.5", (Values((4, 5)),), {"p": 0.5, "training": True, "seed": 3}),
            Case("(4,5) p=0.2", (Values((4, 5)),), {"p": 0.2, "training": True, "seed": 4}),
            Case("(4,5) eval", (Values((4, 5)),), {"p": 0.5, "training": False, "seed": 0}),
        ),
        _generate_dropout,
        "functional",
        "reseeds the global generator on every call, so the mask is fixed",
    )
)


def _sdpa_case(
    label: str, q: tuple, k: tuple, v: tuple, mask: Values | None = None, **params: Any
) -> Case:
    inputs = (Values(q), Values(k), Values(v)) + ((mask,) if mask is not None else ())
    return Case(label, inputs, params)


_SDPA_CASES = (
    _sdpa_case("(2,3,4) x (2,5,4) x (2,5,3)", (2, 3, 4), (2, 5, 4), (2, 5, 3)),
    _sdpa_case("(3,4) causal", (3, 4), (3, 4), (3, 4), is_causal=True),
    _sdpa_case("L=2 < S=4 causal", (2, 3), (4, 3), (4, 2), is_causal=True),
    _sdpa_case(
        "bool mask (2,1,3,3) over heads",
        (2, 2, 3, 4),
        (2, 2, 3, 4),
        (2, 2, 3, 4),
        Values((2, 1, 3, 3), BOOL),
    ),
    _sdpa_case("float mask (3,5), needs grad", (3, 4), (5, 4), (5, 2), Values((3, 5))),
    _sdpa_case("scale=0.3", (3, 4), (5, 4), (5, 2), scale=0.3),
    _sdpa_case("batch broadcast (2,1,..) x (1,2,..)", (2, 1, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)),
)


def _generate_sdpa(c: Choices) -> Case:
    batch = c.shape(max_dims=2, max_side=2)
    length, source, width = c.integer(1, 4), c.integer(1, 4), c.integer(1, 4)
    kind = c.pick(("none", "causal", "bool", "float"))
    mask = {"bool": Values((length, source), BOOL), "float": Values((length, source))}.get(kind)
    return _sdpa_case(
        "",
        (*batch, length, width),
        (*batch, source, width),
        (*batch, source, c.integer(1, 4)),
        mask,
        is_causal=kind == "causal",
    )


register(
    OpSpec(
        "F.scaled_dot_product_attention",
        F.scaled_dot_product_attention,
        _np_attention_default_scale,
        _SDPA_CASES,
        _generate_sdpa,
        "functional",
        "the fused op, through the functional's argument checks",
    )
)
register(
    OpSpec(
        "F.attention_composed",
        F.attention_composed,
        _np_attention_default_scale,
        _SDPA_CASES,
        _generate_sdpa,
        "functional",
        "attention from primitive ops (matmul, masked_fill, softmax)",
    )
)


def _generate_attention_weights(c: Choices) -> Case:
    case = _generate_sdpa(c)
    inputs = case.inputs[:2] + case.inputs[3:]  # no values
    return Case("", inputs, case.params)


register(
    OpSpec(
        "F.attention_weights",
        F.attention_weights,
        _np_attention_weights,
        tuple(
            Case(case.label, case.inputs[:2] + case.inputs[3:], case.params) for case in _SDPA_CASES
        ),
        _generate_attention_weights,
        "functional",
        "the attention table softmax(q k^T * scale (+ mask))",
    )
)
