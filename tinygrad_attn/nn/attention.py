"""Attention layers: the reference article's single head, and multi-head attention.

`SelfAttention` is written out step by step with primitive ops (Q, K, V projections, then
`F.attention_weights`, then the weighted sum of values), so a drawn graph shows every step of
the article. `MultiHeadAttention` uses the fused `F.scaled_dot_product_attention`: one node,
less memory, the layer a model would actually use.
"""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensor import Tensor
from .linear import Linear
from .module import Module, check_size


class SelfAttention(Module):
    """One head of self-attention, as in the reference article: `softmax(Q K^T / sqrt(d)) V`
    with `Q = x Wq^T`, `K = x Wk^T`, `V = x Wv^T` (`query`, `key`, `value` Linear layers).

    One word, one thing: the attention (the attention weights) is the softmax's `(..., T, T)`
    table, row i saying how much token i attends to each token; the head's output is those
    weights applied to the values, `weights V`. Input `(..., T, embed_dim)` -> output
    `(..., T, embed_dim)`, named "output" in the graph, where the table is the node "weights".
    After each call, `.attn_weights` is that call's table, detached from the graph.
    """

    def __init__(self, embed_dim: int, bias: bool = False) -> None:
        super().__init__()
        check_size(self, embed_dim=embed_dim)
        self.embed_dim = embed_dim
        # composed: the graph shows each projection as the article writes it, x @ W^T
        self.query = Linear(embed_dim, embed_dim, bias=bias, composed=True)
        self.key = Linear(embed_dim, embed_dim, bias=bias, composed=True)
        self.value = Linear(embed_dim, embed_dim, bias=bias, composed=True)
        self.attn_weights: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        self._check_width(x, self.embed_dim, sequence=True)
        q = self.query(x)  # (..., T, D)
        q.name = "Q"
        k = self.key(x)  # (..., T, D)
        k.name = "K"
        v = self.value(x)  # (..., T, D)
        v.name = "V"
        weights = F.attention_weights(q, k)  # (..., T, T): the attention
        out = weights @ v  # (..., T, D): the head's output
        out.name = "output"
        # Detached: looking at the table must not keep this call's graph (and the arrays it
        # holds read-only) alive until the next call.
        self.attn_weights = weights.detach()
        return out

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}"


class MultiHeadAttention(Module):
    """`num_heads` attention heads side by side, through the fused scaled dot-product op.

    `forward(x)` is self-attention; `forward(query, key, value, attn_mask=None)` attends from
    `query (..., L, E)` to `key (..., S, E)` / `value (..., S, E)`. Each head sees
    `embed_dim // num_heads` features. A bool `attn_mask` is True where attention is ALLOWED
    (as `F.scaled_dot_product_attention`, not `torch.nn.MultiheadAttention`); it must broadcast
    to `(..., num_heads, L, S)`, so a per-batch mask is `(B, 1, L, S)`. `is_causal=True` makes
    every call causal.
    """

    def __init__(
        self, embed_dim: int, num_heads: int, bias: bool = True, is_causal: bool = False
    ) -> None:
        super().__init__()
        check_size(self, embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            divisors = [h for h in range(1, embed_dim + 1) if embed_dim % h == 0]
            raise ValueError(
                f"MultiHeadAttention: embed_dim={embed_dim} is not divisible by "
                f"num_heads={num_heads}; each head gets embed_dim // num_heads features. "
                f"num_heads can be one of {divisors}"
            )
        self.embed_dim = embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.is_causal = is_causal
        self.q_proj = Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)

    def _split_heads(self, x: Tensor) -> Tensor:
        x = x.reshape(*x.shape[:-1], self.num_heads, self.head_dim)  # (..., T, H, D)
        return x.swapaxes(-2, -3)  # (..., H, T, D)

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        attn_mask: Any = None,
    ) -> Tensor:
        key = query if key is None else key
        value = key if value is None else value
        for what, t in (("query", query), ("key", key), ("value", value)):
            self._check_width(t, self.embed_dim, what, sequence=True)
        if key.shape[-2] != value.shape[-2]:
            raise ValueError(
                f"{self._label()}: key {key.shape} and value {value.shape} must have the same "
                "number of positions (second-to-last axis)"
            )
        q = self._split_heads(self.q_proj(query))  # (..., H, L, D)
        k = self._split_heads(self.k_proj(key))  # (..., H, S, D)
        v = self._split_heads(self.v_proj(value))  # (..., H, S, D)
        out = F.scaled_dot_product_attention(
            q, k, v, attn_mask=attn_mask, is_causal=self.is_causal
        )  # (..., H, L, D)
        out = out.swapaxes(-2, -3)  # (..., L, H, D)
        out = out.reshape(*out.shape[:-2], self.embed_dim)  # (..., L, E)
        return self.out_proj(out)  # (..., L, E)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, is_causal={self.is_causal}"
