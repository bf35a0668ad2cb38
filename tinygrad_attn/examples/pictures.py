"""The pictures of the README and the command line: the article's head drawn with its numbers,
small transformer models drawn collapsed and expanded, and the replayed backward passes.

- `training_step_picture`: one training step of the article's head (by default the trained
  one), every value and gradient kept (`viz.keep_values`) and its axes labelled;
- `backward_as_ops_picture`: the gradient of that head's loss with respect to `query.weight`,
  recorded by `backward(create_graph=True)`: the backward pass drawn as ops;
- `transformer_block_loss` / `transformer_stack_step`: small transformer models for the
  collapsed pictures and the replay;
- `model_gradient_picture`: the embedding's gradient of a small model around a transformer
  block, recorded the same way: each module's backward one red-bordered box;
- `render_examples`: `python -m tinygrad_attn graph`; `replay_example`: `... replay`.

Every file goes into the folder given (`--out`), named after what it shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .. import functional as F
from .. import nn
from ..state import get_default_dtype, manual_seed
from ..tensor import Tensor
from ..viz import keep_values, render_graph, replay_backward
from .article import (
    FEATURES,
    HEAD_AXES,
    SENTENCE,
    SENTENCES,
    new_head,
    sense_loss,
    train_article_head,
)

REPLAY_MODELS = ("head", "transformer")


def trained_head(seed: int = 0) -> nn.SelfAttention:
    """The article's head after its training (`new_head`, then `train_article_head`)."""
    head = new_head(seed)
    train_article_head(head)
    return head


def training_step_picture(
    head: nn.SelfAttention | None = None,
    sentence: str = SENTENCES[0],
    state: str = "the trained head",
):
    """One training step of the article's head on `sentence`: forward and backward, with every
    value kept for the picture (`viz.keep_values`). `head`: default, the trained head, so the
    picture shows what it learned (its attention table); `state` names it in the title.
    Returns `(loss, options)`: the loss (its graph released, the parameters holding their
    gradients) and the drawing options that show the numbers, every axis labelled by what it
    is (`HEAD_AXES`)."""
    if head is None:
        head = trained_head()
    head.zero_grad()
    with keep_values():
        loss = sense_loss(head, sentence)
        loss.backward()
    options = {
        "show_values": True,
        "show_grads": True,
        "axis_labels": HEAD_AXES,
        "model": head,
        "title": f'one training step of {state} on "{sentence}"',
    }
    return loss, options


def backward_as_ops_picture(head: nn.SelfAttention | None = None, sentence: str = SENTENCES[0]):
    """The article's loss on `sentence` run backward with `create_graph=True`, so that the
    gradient of `query.weight` is a tensor with a graph: the ops the backward pass made (the
    article's red arrows) and the forward values they read. `head`: default, the trained one;
    its gradients are set afresh. Returns `(gradient, options)`: `query.weight.grad` and the
    options that draw it."""
    if head is None:
        head = trained_head()
    head.zero_grad()  # (to None: the gradient's graph is then this pass's alone)
    sense_loss(head, sentence).backward(create_graph=True)
    title = f'query.weight.grad on "{sentence}": the backward pass as ops (create_graph=True)'
    return head.query.weight.grad, {"model": head, "title": title}


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


def transformer_block_loss(seed: int = 0) -> tuple[Tensor, nn.Module]:
    """The next-word loss of a tiny model built around a transformer block, on the first
    sentence (forward only). Returns `(loss, model)`."""
    manual_seed(seed)
    vocab = {word: i for i, word in enumerate(sorted(set(SENTENCE)))}
    tokens = np.array([[vocab[word] for word in SENTENCE]])  # (1, T)
    model = TinyLanguageModel(len(vocab), embed_dim=8, num_heads=2)
    logits = model(tokens[:, :-1])  # (1, T-1, V): predict each next word
    logits.name = "logits"
    loss = F.cross_entropy(logits, tokens[:, 1:], axis=-1)  # class axis last: (1, T-1, V)
    loss.name = "loss"
    return loss, model


def transformer_block_step(seed: int = 0) -> tuple[Tensor, nn.Module]:
    """`transformer_block_loss` and its backward (the graph is released; the parameters
    hold their gradients). Returns `(loss, model)`."""
    loss, model = transformer_block_loss(seed)
    loss.backward()
    return loss, model


def model_gradient_picture(seed: int = 0):
    """`transformer_block_loss` run backward with `create_graph=True`: `embed.weight.grad` is a
    tensor whose graph holds every module's forward and backward ops. Drawn collapsed, each
    module is two boxes, its forward and (red-bordered) its backward. Returns
    `(gradient, options)`."""
    loss, model = transformer_block_loss(seed)
    loss.backward(create_graph=True)
    title = "embed.weight.grad of a small model around a transformer block (create_graph=True)"
    return model.embed.weight.grad, {"model": model, "title": title, "direction": "TB"}


def transformer_stack_step(blocks: int = 2, embed_dim: int = 32, seed: int = 0):
    """A stack of `blocks` TransformerBlocks (E=`embed_dim`, 2 heads) on random input, summed
    and backpropagated. Returns `(loss, model)`."""
    manual_seed(seed)
    model = nn.Sequential(*(nn.TransformerBlock(embed_dim, 2) for _ in range(blocks)))
    data = np.random.default_rng(seed).standard_normal((1, len(SENTENCE), embed_dim))  # (B, T, E)
    x = Tensor(data, dtype=get_default_dtype(), name="X")
    loss = model(x).sum()
    loss.name = "loss"
    loss.backward()
    return loss, model


def render_examples(out_dir: str | Path) -> list[Path]:
    """Draw the README's pictures into `out_dir` as .svg and .png; return the files written:
    the trained head (one training step, with its numbers), a two-block transformer stack
    (collapsed by default), the same stack with its first block's attention expanded, and the
    trained head's `query.weight.grad` drawn as the ops of its backward pass, and a small
    model's embedding gradient with each module's backward collapsed into a box.
    Raises RendererNotFound without a Graphviz renderer."""
    out_dir = Path(out_dir)
    head_loss, head_options = training_step_picture()
    gradient, gradient_options = backward_as_ops_picture()  # (a head of its own: its .grad)
    stack_loss, stack = transformer_stack_step()
    model_gradient, model_gradient_options = model_gradient_picture()
    pictures = [
        ("attention_graph", head_loss, head_options),
        (
            "transformer_stack",
            stack_loss,
            {"model": stack, "title": "two TransformerBlocks (E=32), drawn with default options"},
        ),
        (
            "transformer_attention",
            stack_loss,
            {"model": stack, "expand": "0.attn", "title": 'the same, with expand="0.attn"'},
        ),
        ("backward_as_ops", gradient, gradient_options),
        ("model_gradient", model_gradient, model_gradient_options),
    ]
    written = []
    for stem, loss, options in pictures:
        for suffix in (".svg", ".png"):
            written.append(render_graph(loss, path=out_dir / f"{stem}{suffix}", **options))
    return written


def replay_example(out_dir: str | Path, model: str = "head") -> Path:
    """`python -m tinygrad_attn replay [--model head|transformer]`: the backward pass of the
    article's head, freshly initialised ("The earth is like an orange", the loss pulling
    "orange" towards the fruit), or of a small model around a transformer block (its modules
    collapsed), replayed in `out_dir/backward_<model>.html`. Returns the page's path."""
    if model == "head":
        manual_seed(0)
        head = nn.SelfAttention(len(FEATURES))  # random values: every gradient is nonzero
        loss = sense_loss(head, SENTENCES[0])
        title = f'one backward pass of a self-attention head: "{SENTENCES[0]}"'
        options = {"axis_labels": HEAD_AXES, "model": head}
    elif model == "transformer":
        loss, block_model = transformer_block_loss()
        title = "one backward pass of a small model around a transformer block"
        words = SENTENCE[:-1]  # the model reads these five and predicts the next
        vocab = sorted(set(SENTENCE))
        options = {
            "model": block_model,
            "collapse_depth": 2,
            # the logits: a row per word read, a column per word of the vocabulary
            "axis_labels": {"logits": (None, words, vocab), "embed.weight": (vocab, None)},
        }
    else:
        raise ValueError(f"replay: --model {model!r}; use one of {', '.join(REPLAY_MODELS)}")
    path = Path(out_dir) / f"backward_{model}.html"
    return replay_backward(loss, path, title=title, **options)
