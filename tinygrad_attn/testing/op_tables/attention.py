"""Op-table rows for the fused scaled dot-product attention (ops/attention.py): masks of every
kind, causal with L != S, a fully masked row.

`np_attention` is shared with the functional and nn rows. Test data only: nothing here checks
or changes an op.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ops.attention import ScaledDotProductAttention
from ...tensor import Tensor
from ..opspec import (
    BOOL,
    Case,
    Choices,
    OpSpec,
    Values,
    fixed,
    register,
)


def np_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *mask: np.ndarray,
    scale: float,
    is_causal: bool = False,
) -> np.ndarray:
    scores = np.einsum("...le,...se->...ls", q, k) * scale  # (..., L, S)
    allowed = np.ones(scores.shape, dtype=bool)
    if is_causal:
        allowed = np.broadcast_to(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores.shape)
    elif mask and mask[0].dtype == np.bool_:
        allowed = np.broadcast_to(mask[0], scores.shape)
    elif mask:
        scores = scores + mask[0]
    weights = np.where(allowed, np.exp(scores - scores.max(axis=-1, keepdims=True)), 0.0)
    total = weights.sum(axis=-1, keepdims=True)
    weights = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    return np.einsum("...ls,...se->...le", weights, v)  # (..., L, Ev)


def _fused_attention(
    q: Tensor, k: Tensor, v: Tensor, *mask: Any, scale: float, is_causal: bool = False
) -> Tensor:
    return ScaledDotProductAttention.apply(q, k, v, *mask, scale=scale, is_causal=is_causal)


def _attention_case(
    label: str,
    batch: tuple,
    length: int,
    source: int,
    width: int,
    value_width: int,
    mask: Values | None = None,
    is_causal: bool = False,
) -> Case:
    inputs = (
        Values((*batch, length, width)),
        Values((*batch, source, width)),
        Values((*batch, source, value_width)),
    )
    if mask is not None:
        inputs += (mask,)
    return Case(label, inputs, {"scale": 1 / math.sqrt(width), "is_causal": is_causal})


def _generate_attention(c: Choices) -> Case:
    batch = c.shape(max_dims=2, max_side=2)
    length, source = c.integer(1, 4), c.integer(1, 4)
    width, value_width = c.integer(1, 4), c.integer(1, 4)
    kind = c.pick(("none", "causal", "bool", "float"))
    mask = None
    if kind == "bool":
        mask = Values((length, source), BOOL)
    elif kind == "float":
        mask = Values((length, source))
    return _attention_case(
        "", batch, length, source, width, value_width, mask, is_causal=kind == "causal"
    )


register(
    OpSpec(
        "ScaledDotProductAttention",
        _fused_attention,
        np_attention,
        (
            _attention_case("q (2,3,4), k,v (2,5,_): no mask", (2,), 3, 5, 4, 6),
            _attention_case("(3,4) self-attention, causal", (), 3, 3, 4, 4, is_causal=True),
            _attention_case("L=3 < S=5, causal top-left", (2,), 3, 5, 4, 2, is_causal=True),
            _attention_case("L=4 > S=2, causal", (), 4, 2, 3, 3, is_causal=True),
            _attention_case("bool mask (3,5)", (2,), 3, 5, 4, 2, Values((3, 5), BOOL)),
            _attention_case(
                "bool mask with a fully masked row (gives zeros)",
                (),
                2,
                3,
                2,
                2,
                fixed([[True, False, True], [False, False, False]]),
            ),
            _attention_case("float mask (3,5), added to scores", (2,), 3, 5, 4, 2, Values((3, 5))),
            _attention_case("heads (1,2,3,4)", (1, 2), 3, 3, 4, 4),
        ),
        _generate_attention,
        "ops.attention",
        "the fused op behind F.scaled_dot_product_attention",
    )
)
