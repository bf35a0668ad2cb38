"""Demo 2's data and model: telling "orange" the fruit from "orange" the colour by context.

Generated sentences of six words: "orange" somewhere, one or two words of its sense ("juicy",
"peel" ... or "paint", "dress" ...) elsewhere, filler words ("the", "was" ...) in the rest. The
model is Embedding -> one self-attention head -> Linear, read only at the "orange" position:
since "orange" has one embedding, it can tell the senses apart only by attending to the context.

`demos/02_learning_orange.py` trains it (its loop and arguments are in the script) and
`python -m tinygrad_attn learn --model classifier` records that training; both import the model
and the data from here, so they are written once. This module defines; it does not train.
"""

from __future__ import annotations

import numpy as np

from .. import nn
from ..tensor import Tensor

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
    """`count` sentences of `length` words as token ids `(N, T)`, where "orange" is in each
    `(N,)`, and its sense `(N,)` (0 fruit, 1 colour): "orange" at a random place, one or two
    words of its sense elsewhere, filler words in the rest."""
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
    """Embedding -> one self-attention head -> Linear, read at the "orange" position."""

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
