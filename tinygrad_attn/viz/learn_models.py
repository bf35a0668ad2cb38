"""The models and data of demos 2 and 3, for `python -m tinygrad_attn learn`.

The demo scripts (demos/02_learning_orange.py, demos/03_causal_transformer.py) own their models
and loops, and a script is not importable from an installed package; the `learn` command must
work after `pip install` alone, so the two models and their data generators are repeated here,
built in the same order as the demos' (so a seed gives the same parameters and the same
sentences). tests/test_learn.py runs both scripts' definitions against these and fails if they
drift apart.

This module only defines models and data; it does not train.
"""

from __future__ import annotations

import numpy as np

from .. import Tensor, nn

# ------------------------------------------------------------------ demo 2: "orange" in context
FRUIT_WORDS = (
    "eat", "ate", "peel", "juicy", "sweet", "ripe", "tree", "juice", "slice", "squeeze", "seeds",
    "fresh",
)  # fmt: skip
COLOUR_WORDS = (
    "paint", "painted", "bright", "shade", "wall", "dress", "shirt", "sunset", "wear", "color",
    "dye", "hue",
)  # fmt: skip
FILLER_WORDS = (
    "the", "a", "is", "was", "an", "i", "she", "he", "my", "this", "very", "and", "we", "so",
    "it", "that",
)  # fmt: skip
VOCAB = ("orange", *FRUIT_WORDS, *COLOUR_WORDS, *FILLER_WORDS)
SENSE_NAMES = ("fruit", "colour")


def orange_sentences(
    count: int, length: int = 6, seed: int = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Demo 2's data: token ids `(N, T)`, where "orange" is `(N,)`, its sense `(N,)` (0 fruit,
    1 colour). "orange" at a random place, one or two words of its sense, filler elsewhere."""
    rng = np.random.default_rng(seed)
    filler = [VOCAB.index(w) for w in FILLER_WORDS]
    context = [[VOCAB.index(w) for w in FRUIT_WORDS], [VOCAB.index(w) for w in COLOUR_WORDS]]
    ids = rng.choice(filler, size=(count, length))  # (N, T)
    label = rng.integers(0, 2, size=count)  # (N,)
    position = np.empty(count, dtype=np.int64)  # (N,)
    for i in range(count):
        slots = rng.permutation(length)
        position[i] = slots[0]
        ids[i, slots[0]] = VOCAB.index("orange")
        for slot in slots[1 : 1 + rng.integers(1, 3)]:
            ids[i, slot] = rng.choice(context[label[i]])
    return ids, position, label


class OrangeSenseModel(nn.Module):
    """Demo 2's model: Embedding -> one self-attention head -> Linear, read at "orange"."""

    def __init__(self, vocab_size: int, embed_dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.attn = nn.SelfAttention(embed_dim)
        self.classify = nn.Linear(embed_dim, len(SENSE_NAMES))

    def forward(self, ids: np.ndarray, position: np.ndarray) -> Tensor:
        x = self.embed(ids)  # (B, T, D)
        h = self.attn(x)  # (B, T, D)
        at_orange = h[np.arange(len(ids)), position]  # (B, D)
        return self.classify(at_orange)  # (B, 2)


# ------------------------------------------------------------------ demo 3: reversing digits
SEPARATOR = 10  # token id after the digits 0-9


class TinyTransformer(nn.Module):
    """Demo 3's model: token + position embeddings -> causal TransformerBlocks -> LayerNorm ->
    Linear logits over the 11 tokens."""

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
    """Demo 3's data: sequences `d1 .. dn SEP dn .. d1`, shape (count, 2n + 1)."""
    first = rng.integers(0, 10, size=(count, digits))  # (N, n)
    sep = np.full((count, 1), SEPARATOR)  # (N, 1)
    return np.concatenate([first, sep, first[:, ::-1]], axis=1)  # (N, 2n+1)
