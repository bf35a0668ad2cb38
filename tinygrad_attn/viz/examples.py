"""The pictures of the README: the article's attention head, and a collapsed transformer block.

`render_examples(out_dir)` runs one training step (forward and backward) of each model and
draws its graph afterwards, from the released graph, as SVG and PNG. `python -m tinygrad_attn
graph` calls it.

This module only builds small models and draws them; it must not be imported by the core.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import functional as F
from .. import nn
from ..tensor import Tensor, manual_seed
from .render import render_graph

SENTENCE = ("the", "earth", "is", "like", "an", "orange")


def attention_head_step(seed: int = 0) -> Tensor:
    """One training step of the article's single self-attention head; returns the loss.

    X (one embedding per word of "The earth is like an orange") feeds the Query, Key and Value
    layers; the scores Q K^T / sqrt(d) are normalised by softmax into weights, which are
    applied to the values. The loss pulls the output towards a target; backward() has run,
    so the graph is released and the parameters hold their gradients.
    """
    manual_seed(seed)
    rng = np.random.default_rng(seed)
    embed_dim = 4
    x = Tensor(rng.uniform(-1, 1, (len(SENTENCE), embed_dim)), dtype=np.float32, name="X")
    target = Tensor(rng.uniform(-1, 1, (len(SENTENCE), embed_dim)), dtype=np.float32, name="target")
    head = nn.SelfAttention(embed_dim)
    out = head(x)  # (T, D)
    loss = F.mse_loss(out, target)
    loss.name = "loss"
    loss.backward()
    return loss


class TinyLanguageModel(nn.Module):
    """Token embedding -> one causal transformer block -> a linear head over the vocabulary."""

    def __init__(self, vocab_size: int, embed_dim: int, num_heads: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.block = nn.TransformerBlock(embed_dim, num_heads)
        self.head = nn.Linear(embed_dim, vocab_size)

    def forward(self, tokens: np.ndarray) -> Tensor:
        x = self.embed(tokens)  # (B, T, E)
        x = self.block(x)  # (B, T, E)
        return self.head(x)  # (B, T, V)


def transformer_block_step(seed: int = 0) -> Tensor:
    """One next-word training step of a tiny model built around a transformer block.

    Returns the loss after backward() (the graph is released; parameters hold gradients).
    """
    manual_seed(seed)
    vocab = {word: i for i, word in enumerate(sorted(set(SENTENCE)))}
    tokens = np.array([[vocab[word] for word in SENTENCE]])  # (1, T)
    model = TinyLanguageModel(len(vocab), embed_dim=8, num_heads=2)
    logits = model(tokens[:, :-1])  # (1, T-1, V): predict each next word
    loss = F.cross_entropy(logits, tokens[:, 1:])
    loss.name = "loss"
    loss.backward()
    return loss


def render_examples(out_dir: str | Path) -> list[Path]:
    """Draw the example graphs into `out_dir` as .svg and .png; return the files written.

    Raises RuntimeError (after writing the .dot files) if no Graphviz renderer is found.
    """
    out_dir = Path(out_dir)
    written: list[Path] = []
    head_loss = attention_head_step()
    block_loss = transformer_block_step()
    pictures = [
        ("attention_graph", head_loss, {"title": "one training step of a self-attention head"}),
        (
            "transformer_block",
            block_loss,
            {"collapse_depth": 2, "title": "a transformer block, its modules collapsed"},
        ),
    ]
    for stem, loss, options in pictures:
        for suffix in (".svg", ".png"):
            written.append(render_graph(loss, path=out_dir / f"{stem}{suffix}", **options))
    return written
