"""TransformerBlock: pre-norm attention and MLP, each added back to the residual stream."""

from __future__ import annotations

from typing import Any

from ..tensor import Tensor
from .activation import GELU
from .attention import MultiHeadAttention
from .containers import Sequential
from .linear import Linear
from .module import Module, check_size
from .norm import LayerNorm


class TransformerBlock(Module):
    """x + attn(ln1(x)), then x + mlp(ln2(x)) — the pre-norm block of GPT-2 / nanoGPT.

    `mlp` is Linear(E, mlp_ratio*E) -> GELU (tanh form, as GPT-2; the exact erf form is
    evaluated element by element and is many times slower here) -> Linear(mlp_ratio*E, E).
    Causal by default: position t sees positions <= t only. Input and output `(..., T, E)`.
    Each LayerNorm, Linear and GELU is one fused graph node and the attention one more, so a
    block records 20 nodes (the head split and merge are the rest).
    """

    def __init__(
        self, embed_dim: int, num_heads: int, mlp_ratio: int = 4, is_causal: bool = True
    ) -> None:
        super().__init__()
        check_size(self, embed_dim=embed_dim, num_heads=num_heads, mlp_ratio=mlp_ratio)
        self.embed_dim = embed_dim
        self.ln1 = LayerNorm(embed_dim)
        self.attn = MultiHeadAttention(embed_dim, num_heads, is_causal=is_causal)
        self.ln2 = LayerNorm(embed_dim)
        hidden = mlp_ratio * embed_dim
        self.mlp = Sequential(
            Linear(embed_dim, hidden), GELU(approximate="tanh"), Linear(hidden, embed_dim)
        )

    def forward(self, x: Tensor, attn_mask: Any = None) -> Tensor:
        self._check_width(x, self.embed_dim, sequence=True)
        x = x + self.attn(self.ln1(x), attn_mask=attn_mask)  # (..., T, E)
        x = x + self.mlp(self.ln2(x))  # (..., T, E)
        return x
