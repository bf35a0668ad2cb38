"""Demo 3's data and model: a small causal transformer that learns to reverse digits.

Sequences `d1 .. dn SEP dn .. d1`; token + position embeddings, pre-norm TransformerBlocks
(causal multi-head attention and an MLP), a final LayerNorm and a Linear head over the 11
tokens (digits and the separator).

`demos/03_causal_transformer.py` trains it (its loop, decoding and arguments are in the
script) and `python -m tinygrad_attn learn --model transformer` records that training; both
import the model and the data from here. This module defines; it does not train.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..tensor import Tensor

SEPARATOR = 10  # token id after the digits 0-9


class TinyTransformer(nn.Module):
    """Token + position embeddings -> causal TransformerBlocks -> LayerNorm -> Linear logits
    over the 11 tokens."""

    def __init__(
        self,
        vocab_size: int,
        max_len: int,
        embed_dim: int = 32,
        num_heads: int = 2,
        num_layers: int = 2,
    ) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab_size, embed_dim)
        self.positions = nn.Embedding(max_len, embed_dim)
        self.blocks = nn.ModuleList(
            nn.TransformerBlock(embed_dim, num_heads, is_causal=True) for _ in range(num_layers)
        )
        self.ln_f = nn.LayerNorm(embed_dim)
        self.head = nn.Linear(embed_dim, vocab_size)

    def forward(self, ids: np.ndarray) -> Tensor:
        x = self.tokens(ids) + self.positions(np.arange(ids.shape[-1]))  # (B, T, E)
        for block in self.blocks:
            x = block(x)  # (B, T, E)
        return self.head(self.ln_f(x))  # (B, T, V)


def reverse_examples(rng: np.random.Generator, count: int, digits: int) -> np.ndarray:
    """Sequences `d1 .. dn SEP dn .. d1`, shape (count, 2n + 1): the task is the second half."""
    first = rng.integers(0, 10, size=(count, digits))  # (N, n)
    sep = np.full((count, 1), SEPARATOR)  # (N, 1)
    return np.concatenate([first, sep, first[:, ::-1]], axis=1)  # (N, 2n+1)
