"""`nn.MultiheadAttention`: PyTorch's layer of that name, with its parameters
(`in_proj_weight`, `in_proj_bias`, `out_proj`), so a PyTorch `state_dict` loads into it; its
layout (`(L, N, E)` unless `batch_first=True`); its masks (a bool mask is True where attention
is NOT allowed, the opposite of `F.scaled_dot_product_attention`'s); and its return value
`(output, weights)`, the weights averaged over the heads unless `average_attn_weights=False`.

Written with Tensor ops (linear, matmul, softmax), so a drawn graph shows every step. This
project's own `nn.MultiHeadAttention` (attention.py) is the leaner layer for new code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import functional as F
from ..creation import from_numpy
from ..state import get_default_dtype
from ..tensor import Tensor
from . import init
from .linear import Linear
from .module import Module, check_size


class MultiheadAttention(Module):
    """PyTorch's `nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True,
    batch_first=False)`: `forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)` -> `(output, weights)`."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
    ) -> None:
        super().__init__()
        check_size(self, embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim={embed_dim} must be divisible by "
                f"num_heads={num_heads}"
            )
        if (
            add_bias_kv
            or add_zero_attn
            or kdim not in (None, embed_dim)
            or vdim
            not in (
                None,
                embed_dim,
            )
        ):
            raise ValueError(
                "MultiheadAttention: add_bias_kv, add_zero_attn and a kdim/vdim other than "
                "embed_dim are not supported here"
            )
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim, self.batch_first = embed_dim // num_heads, batch_first
        dtype = get_default_dtype()
        self.in_proj_weight = from_numpy(np.zeros((3 * embed_dim, embed_dim), dtype), True)
        init.xavier_uniform_(self.in_proj_weight)  # (3E, E): the query, key, value rows
        self.in_proj_bias = from_numpy(np.zeros(3 * embed_dim, dtype), True) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple:
        unbatched = query.ndim == 2
        if unbatched:  # (L, E): one sequence
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if not self.batch_first or unbatched:  # (L, N, E) -> (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        e, h, d = self.embed_dim, self.num_heads, self.head_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        projected = [
            F.linear(t, w[i * e : (i + 1) * e], None if b is None else b[i * e : (i + 1) * e])
            for i, t in enumerate((query, key, value))
        ]  # each (N, L or S, E)
        q, k, v = (t.reshape(*t.shape[:2], h, d).transpose(1, 2) for t in projected)  # (N,H,T,D)
        scores = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(d))  # (N, H, L, S)
        scores = self._masked(scores, attn_mask, key_padding_mask, is_causal)
        weights = scores.softmax(-1)  # (N, H, L, S)
        if self.dropout and self.training:
            weights = F.dropout(weights, self.dropout)
        out = (weights @ v).transpose(1, 2).reshape(q.shape[0], -1, e)  # (N, L, E)
        out = self.out_proj(out)
        if not self.batch_first or unbatched:
            out = out.transpose(0, 1)  # (L, N, E)
        if unbatched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        if not need_weights:
            return out, None
        return out, weights.mean(dim=-3) if average_attn_weights else weights

    def _masked(self, scores: Tensor, attn_mask: Any, padding: Any, is_causal: bool) -> Tensor:
        """The scores with PyTorch's masks applied: a bool mask is True where attention is not
        allowed (-inf there), a float mask is added; `attn_mask` is (L, S) or (N*H, L, S),
        `key_padding_mask` (N, S)."""
        n, h, length, source = scores.shape
        if is_causal and attn_mask is None:
            attn_mask = np.triu(np.ones((length, source), dtype=bool), 1)
        for mask, shape in ((attn_mask, None), (padding, (n, 1, 1, source))):
            if mask is None:
                continue
            mask = np.asarray(mask._data if isinstance(mask, Tensor) else mask)
            if shape is None:  # attn_mask
                shape = (length, source) if mask.ndim == 2 else (n, h, length, source)
            mask = mask.reshape(shape)
            if mask.dtype == np.bool_:
                scores = scores.masked_fill(mask, -np.inf)
            else:
                scores = scores + mask.astype(scores.dtype)
        return scores

    def extra_repr(self) -> str:
        heads = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        return heads + (", batch_first=True" if self.batch_first else "")
