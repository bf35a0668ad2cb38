"""Op-table rows for the nn layers (nn/): each checked with respect to its input and every one
of its parameters.

Test data only: nothing here checks or changes a layer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import nn
from ...tensor import Tensor
from ..opspec import (
    SPREAD,
    Case,
    Choices,
    OpSpec,
    Values,
    register,
)
from .attention import np_attention
from .functional import layer_norm_shape, np_gelu, np_layer_norm

# Each layer is gradchecked with respect to its input AND its parameters: the parameters are
# passed in as inputs and swapped in for one call by `nn.functional_call`. The parameter
# shapes in the cases follow each layer's contract (in `named_parameters()` order); a wrong one
# fails the forward, or its comparison with the NumPy reference, in tests/test_ops.py.

_MODULES: dict = {}


def _module(kind: type, *config: Any) -> nn.Module:
    """One instance per layer configuration (its own parameters are never used)."""
    key = (kind, config)
    if key not in _MODULES:
        _MODULES[key] = kind(*config)
    return _MODULES[key]


def _with_parameters(module: nn.Module, parameters: Sequence[Tensor], *args: Any, **kw: Any):
    names = [name for name, _ in module.named_parameters()]
    return nn.functional_call(module, dict(zip(names, parameters)), *args, **kw)


def _nn_linear(x: Tensor, weight: Tensor, *bias: Tensor) -> Tensor:
    module = _module(nn.Linear, weight.shape[1], weight.shape[0], bool(bias))
    return _with_parameters(module, (weight, *bias), x)


def _np_linear(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray) -> np.ndarray:
    out = x @ weight.T
    return out + bias[0] if bias else out


def _nn_layer_norm(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    return _with_parameters(_module(nn.LayerNorm, tuple(weight.shape)), (weight, bias), x)


def _np_nn_layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return np_layer_norm(x, weight, bias, normalized_shape=weight.shape)


def _nn_embedding(weight: Tensor, ids: np.ndarray) -> Tensor:
    return _with_parameters(_module(nn.Embedding, *weight.shape), (weight,), ids)


def _np_embedding(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[ids]


def _nn_self_attention(x: Tensor, *parameters: Tensor) -> Tensor:
    return _with_parameters(_module(nn.SelfAttention, x.shape[-1]), parameters, x)


def _np_self_attention(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray):
    q, k, v = x @ wq.T, x @ wk.T, x @ wv.T
    return np_attention(q, k, v, scale=1 / math.sqrt(x.shape[-1]))


def _nn_multi_head_attention(
    *tensors: Tensor,
    num_heads: int,
    sources: int = 1,
    is_causal: bool = False,
    attn_mask: Any = None,
) -> Tensor:
    args, parameters = tensors[:sources], tensors[sources:]
    module = _module(nn.MultiHeadAttention, args[0].shape[-1], num_heads, True, is_causal)
    if sources == 1:
        return _with_parameters(module, parameters, args[0])
    return _with_parameters(module, parameters, *args, attn_mask=attn_mask)


def _np_heads(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, num_heads: int):
    projected = x @ weight.T + bias  # (..., T, E)
    split = projected.reshape(*projected.shape[:-1], num_heads, -1)  # (..., T, H, D)
    return np.swapaxes(split, -2, -3)  # (..., H, T, D)


def _np_multi_head_attention(
    *arrays: np.ndarray,
    num_heads: int,
    sources: int = 1,
    is_causal: bool = False,
    attn_mask: Any = None,
) -> np.ndarray:
    args, p = arrays[:sources], arrays[sources:]
    query, key, value = (args * 3)[:3] if sources == 1 else args
    q = _np_heads(query, p[0], p[1], num_heads)  # (..., H, L, D)
    k = _np_heads(key, p[2], p[3], num_heads)  # (..., H, S, D)
    v = _np_heads(value, p[4], p[5], num_heads)  # (..., H, S, D)
    masks = () if attn_mask is None else (attn_mask,)
    out = np_attention(q, k, v, *masks, scale=1 / math.sqrt(q.shape[-1]), is_causal=is_causal)
    out = np.swapaxes(out, -2, -3)  # (..., L, H, D)
    out = out.reshape(*out.shape[:-2], -1)  # (..., L, E)
    return out @ p[6].T + p[7]


def _nn_transformer_block(x: Tensor, *parameters: Tensor, num_heads: int) -> Tensor:
    width = x.shape[-1]
    ratio = parameters[12].shape[0] // width  # mlp.0.weight is (ratio * E, E)
    module = _module(nn.TransformerBlock, width, num_heads, ratio)
    return _with_parameters(module, parameters, x)


def _np_transformer_block(x: np.ndarray, *p: np.ndarray, num_heads: int) -> np.ndarray:
    shape = (x.shape[-1],)
    h = np_layer_norm(x, p[0], p[1], normalized_shape=shape)
    x = x + _np_multi_head_attention(h, *p[2:10], num_heads=num_heads, is_causal=True)
    h = np_layer_norm(x, p[10], p[11], normalized_shape=shape)
    hidden = np_gelu(h @ p[12].T + p[13], approximate="tanh")
    return x + hidden @ p[14].T + p[15]


def _linear_values(inputs: int, outputs: int, bias: bool = True) -> tuple:
    return (Values((outputs, inputs)),) + ((Values((outputs,)),) if bias else ())


def _mha_values(width: int) -> tuple:
    return sum((_linear_values(width, width) for _ in range(4)), ())


def _block_values(width: int, ratio: int) -> tuple:
    norm = (Values((width,)), Values((width,)))
    hidden = ratio * width
    mlp = _linear_values(width, hidden) + _linear_values(hidden, width)
    return norm + _mha_values(width) + norm + mlp


def _generate_linear(c: Choices) -> Case:
    batch = c.shape(max_dims=2)
    inputs, outputs = c.integer(1, 4), c.integer(1, 4)
    return Case("", (Values((*batch, inputs)), *_linear_values(inputs, outputs, c.flag())))


register(
    OpSpec(
        "nn.Linear",
        _nn_linear,
        _np_linear,
        (
            Case("x (2,3,4), Linear(4, 5)", (Values((2, 3, 4)), *_linear_values(4, 5))),
            Case("x (3,), Linear(3, 2, bias=False)", (Values((3,)), *_linear_values(3, 2, False))),
        ),
        _generate_linear,
        "nn",
        "y = x @ W.T + b, checked for x, weight and bias",
    )
)


def _generate_nn_layer_norm(c: Choices) -> Case:
    shape = layer_norm_shape(c)
    return Case("", (Values(shape, SPREAD), Values(shape[-1:]), Values(shape[-1:])))


register(
    OpSpec(
        "nn.LayerNorm",
        _nn_layer_norm,
        _np_nn_layer_norm,
        (Case("x (2,3,4), LayerNorm(4)", (Values((2, 3, 4), SPREAD), Values((4,)), Values((4,)))),),
        _generate_nn_layer_norm,
        "nn",
    )
)


def _generate_embedding(c: Choices) -> Case:
    rows, width = c.integer(1, 5), c.integer(1, 3)
    ids = c.index_array(c.shape(max_dims=2), rows)
    return Case("", (Values((rows, width)),), {"ids": ids})


register(
    OpSpec(
        "nn.Embedding",
        _nn_embedding,
        _np_embedding,
        (
            Case(
                "Embedding(5, 3), ids (2,3) with repeats",
                (Values((5, 3)),),
                {"ids": np.array([[0, 4, 4], [2, 0, 4]])},
            ),
        ),
        _generate_embedding,
        "nn",
        "a repeated id adds up the gradients of all its positions",
    )
)


def _generate_self_attention(c: Choices) -> Case:
    width = c.integer(1, 4)
    x = Values((*c.shape(max_dims=1, max_side=2), c.integer(1, 4), width))
    return Case("", (x, *(Values((width, width)) for _ in range(3))))


register(
    OpSpec(
        "nn.SelfAttention",
        _nn_self_attention,
        _np_self_attention,
        (
            Case(
                "x (2,3,4): the article's head",
                (Values((2, 3, 4)), *(Values((4, 4)) for _ in range(3))),
            ),
        ),
        _generate_self_attention,
        "nn",
    )
)


def _generate_mha(c: Choices) -> Case:
    num_heads = c.integer(1, 2)
    width = num_heads * c.integer(1, 2)
    batch = c.shape(max_dims=1, max_side=2)
    length = c.integer(1, 3)
    if c.flag():
        x = Values((*batch, length, width))
        return Case("", (x, *_mha_values(width)), {"num_heads": num_heads, "is_causal": c.flag()})
    source = c.integer(1, 3)
    sources = (
        Values((*batch, length, width)),
        Values((*batch, source, width)),
        Values((*batch, source, width)),
    )
    mask = c.index_array((length, source), 2).astype(bool) if c.flag() else None
    params = {"num_heads": num_heads, "sources": 3, "attn_mask": mask}
    return Case("", (*sources, *_mha_values(width)), params)


register(
    OpSpec(
        "nn.MultiHeadAttention",
        _nn_multi_head_attention,
        _np_multi_head_attention,
        (
            Case("self (2,3,4), 2 heads", (Values((2, 3, 4)), *_mha_values(4)), {"num_heads": 2}),
            Case(
                "self, x (3,4), 2 heads, causal",
                (Values((3, 4)), *_mha_values(4)),
                {"num_heads": 2, "is_causal": True},
            ),
            Case(
                "cross, q (2,4), k/v (3,4), bool mask",
                (Values((2, 4)), Values((3, 4)), Values((3, 4)), *_mha_values(4)),
                {
                    "num_heads": 2,
                    "sources": 3,
                    "attn_mask": np.array([[True, False, True], [True, True, False]]),
                },
            ),
        ),
        _generate_mha,
        "nn",
        "through the fused attention op; checked for the inputs and all eight projections",
    )
)


def _generate_block(c: Choices) -> Case:
    # Width 4: a layer norm over 2 features maps every input to +-1 and is wildly
    # ill-conditioned (no model uses it); over 4 it behaves like a real block's.
    width = 4
    x = Values((*c.shape(max_dims=1, max_side=2), c.integer(1, 3), width), SPREAD)
    return Case("", (x, *_block_values(width, 2)), {"num_heads": c.pick((1, 2, 4))})


register(
    OpSpec(
        "nn.TransformerBlock",
        _nn_transformer_block,
        _np_transformer_block,
        (
            Case(
                "x (2,3,4), 2 heads, mlp_ratio=2, causal",
                (Values((2, 3, 4), SPREAD), *_block_values(4, 2)),
                {"num_heads": 2},
            ),
        ),
        _generate_block,
        "nn",
        "pre-norm block; checked for the input and all 16 parameters",
    )
)
