"""The reference article's example, in one place: its sentences, word embeddings and head.

"The earth is like an orange" and "Orange is a bright color": the same word, two meanings, and
attention is what tells them apart. This module holds what `python -m tinygrad_attn demo`, the
README's pictures, the replay page and `demos/01_article_walkthrough.py` all use, so the
sentences are written once:

- the article's first attention with no learned matrices (`similarity_attention`), then a
  Query/Key/Value head (`nn.SelfAttention`) and the loss that teaches it the two senses
  (`sense_loss`, `train_article_head`);
- `training_step_picture`: one training step of that head, drawn with its numbers (values and
  gradients as heat maps, rows and columns labelled with the words);
- `transformer_block_step` / `transformer_stack_step`: small transformer models for the
  collapsed pictures; `render_examples` draws the README's pictures;
- `run`: the `demo` command.

The demos in `demos/02` and `demos/03` own their models and loops; this module builds only the
article's small examples. Nothing in the library imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import functional as F
from . import nn, optim
from .gradcheck import gradcheck
from .state import get_default_dtype, manual_seed, no_grad, set_default_dtype
from .tensor import Tensor
from .viz import keep_values, render_graph, replay_backward

Log = Callable[[str], None]


SENTENCES = ("The earth is like an orange", "Orange is a bright color")

# Hand-made word embeddings, one slot per feature, in [-1, 1] as in the article ("negative means
# 'is not'"). "orange" has one embedding: round, a fruit, a colour, bright. Context must tell
# which of those the sentence means. Little words ("the", "is") carry none of these features.
FEATURES = ("round", "fruit", "colour", "planet", "bright")
# fmt: off
WORD_FEATURES = {
    #          round fruit colour planet bright
    "the":    (0.0,  0.0,  0.0,   0.0,   0.0),
    "earth":  (0.9, -0.2,  0.1,   1.0,   0.0),
    "is":     (0.0,  0.0,  0.0,   0.0,   0.0),
    "like":   (0.0,  0.0,  0.0,   0.0,   0.0),
    "an":     (0.0,  0.0,  0.0,   0.0,   0.0),
    "orange": (0.8,  0.9,  0.9,   0.1,   0.6),
    "a":      (0.0,  0.0,  0.0,   0.0,   0.0),
    "bright": (0.0,  0.0,  0.7,   0.0,   1.0),
    "color":  (0.0, -0.2,  1.0,   0.0,   0.4),
}
# fmt: on

# What "orange" means in each sentence (the article: the fruit, then the colour), as the
# feature vector a trained head should turn it into.
SENSES = {SENTENCES[0]: "fruit", SENTENCES[1]: "colour"}


def tokenize(sentence: str) -> list[str]:
    """Lower-case words: "The earth is" -> ["the", "earth", "is"]."""
    return sentence.lower().split()


def embed(tokens: Sequence[str], dtype: object = None) -> np.ndarray:
    """The hand-made embeddings of `tokens`, one row per token: (T, len(FEATURES))."""
    unknown = [t for t in tokens if t not in WORD_FEATURES]
    if unknown:
        raise ValueError(f"embed: no embedding for {unknown}; known words: {list(WORD_FEATURES)}")
    return np.array([WORD_FEATURES[t] for t in tokens], dtype=dtype or get_default_dtype())


def format_table(
    table: np.ndarray, rows: Sequence[str], columns: Sequence[str], title: str = ""
) -> str:
    """A labelled table of numbers, two decimals (attention: rows attend to columns)."""
    width = max(6, *(len(c) + 1 for c in columns))
    first = max(len(r) for r in rows) + 2
    lines = [title] if title else []
    lines.append(" " * first + "".join(f"{c:>{width}}" for c in columns))
    for label, values in zip(rows, np.asarray(table)):
        lines.append(f"{label:<{first}}" + "".join(f"{v:>{width}.2f}" for v in values))
    return "\n".join(lines)


@dataclass
class SentenceAttention:
    """One sentence through attention: its tokens, the (T, T) weights, the (T, F) mixed vectors."""

    sentence: str
    tokens: list[str]
    weights: np.ndarray
    mixed: np.ndarray

    def attends(self, word: str) -> list[tuple[str, float]]:
        """`word`'s attention to every other token, largest first."""
        row = self.weights[self.tokens.index(word)]
        pairs = [(t, float(w)) for t, w in zip(self.tokens, row) if t != word]
        return sorted(pairs, key=lambda pair: -pair[1])


def similarity_attention(sentence: str) -> SentenceAttention:
    """The article's first attention, with no learned matrices: scores = X X^T (how similar
    each pair of words is), weights = softmax(scores) row by row, output = weights @ X (each
    word's vector mixed with the words it attends to)."""
    tokens = tokenize(sentence)
    x = Tensor(embed(tokens), name="X")  # (T, F)
    scores = x @ x.T  # (T, T)
    weights = F.softmax(scores, axis=-1)  # (T, T)
    mixed = weights @ x  # (T, F)
    return SentenceAttention(sentence, tokens, weights._data, mixed._data)


def head_attention(head: nn.SelfAttention, sentence: str) -> SentenceAttention:
    """`sentence` through a Query/Key/Value head (no graph recorded)."""
    tokens = tokenize(sentence)
    with no_grad():
        out = head(Tensor(embed(tokens)))  # (T, F)
    return SentenceAttention(sentence, tokens, head.attn_weights._data, out._data)


def describe_attention(result: SentenceAttention, title: str) -> str:
    """The attention table of one sentence and a line on where "orange" looks."""
    table = format_table(result.weights, result.tokens, result.tokens, title)
    top = ", ".join(f"{t} {w:.2f}" for t, w in result.attends("orange")[:2])
    return f"{table}\n  -> 'orange' attends most (besides itself) to: {top}"


def sense_loss(head: nn.SelfAttention, sentence: str) -> Tensor:
    """How far the head's output for "orange" is from its meaning in `sentence` (MSE to the
    one-hot vector of the sense's feature: fruit or colour)."""
    tokens = tokenize(sentence)
    x = Tensor(embed(tokens, head.query.weight.dtype), name="X")  # (T, F), no gradient: blue
    target = np.zeros(len(FEATURES), dtype=x.dtype)
    target[FEATURES.index(SENSES[sentence])] = 1
    out = head(x)  # (T, F)
    loss = F.mse_loss(out[tokens.index("orange")], Tensor(target, name="target"))
    loss.name = "loss"
    return loss


def train_article_head(head: nn.SelfAttention, steps: int = 150, lr: float = 0.05) -> list:
    """Adam on both sentences' `sense_loss`; returns the loss after each step."""
    opt = optim.Adam(head.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = sense_loss(head, SENTENCES[0]) + sense_loss(head, SENTENCES[1])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def check_head_gradients(seed: int = 0) -> bool:
    """`gradcheck` (float64) of `nn.SelfAttention` on the first sentence, with respect to the
    input X and each parameter; raises `GradcheckError` naming the culprit on failure."""
    previous = get_default_dtype()
    set_default_dtype(np.float64)
    try:
        manual_seed(seed)
        head = nn.SelfAttention(len(FEATURES))
    finally:
        set_default_dtype(previous)
    names = [name for name, _ in head.named_parameters()]
    x = Tensor(embed(tokenize(SENTENCES[0]), np.float64), requires_grad=True, name="X")

    def run_head(x: Tensor, *params: Tensor) -> Tensor:
        return nn.functional_call(head, dict(zip(names, params)), x)

    return gradcheck(run_head, [x, *head.parameters()])


def show_plain_attention(log: Log = print) -> list[SentenceAttention]:
    """Print the article's first attention (no learned matrices) for both sentences, and the
    two "orange" vectors it produces; returns the results."""
    log(f"   embeddings: one slot per feature {FEATURES}")
    log("   scores = X X^T, weights = softmax(scores) per row, output = weights @ X\n")
    plain = [similarity_attention(s) for s in SENTENCES]
    for result in plain:
        log(describe_attention(result, f'"{result.sentence}"  (rows attend to columns)') + "\n")
    rows = [f"orange in '{r.sentence}'" for r in plain]
    orange_rows = [r.mixed[r.tokens.index("orange")] for r in plain]
    log(format_table(orange_rows, rows, FEATURES, "'orange' after attention (features):"))
    log("   the same word, two vectors: 'planet'/'round' from earth, 'colour' from the rest\n")
    return plain


def show_head_attention(head: nn.SelfAttention, label: str, log: Log = print) -> None:
    """Print the attention table of `head` for both sentences."""
    for sentence in SENTENCES:
        log(describe_attention(head_attention(head, sentence), f'"{sentence}", {label}') + "\n")


SENTENCE = tuple(tokenize(SENTENCES[0]))  # ("the", "earth", "is", "like", "an", "orange")


# ====================================================================== the pictures
def training_step_picture(head: nn.SelfAttention | None = None, seed: int = 0):
    """One training step of the article's head on the first sentence: forward and backward,
    with every value kept for the picture (`viz.keep_values`). Returns `(loss, options)`:
    the loss (its graph released, the parameters holding their gradients) and the drawing
    options that show the numbers, labelled with the sentence's words and the features."""
    if head is None:
        manual_seed(seed)
        head = nn.SelfAttention(len(FEATURES))
    with keep_values():
        loss = sense_loss(head, SENTENCES[0])
        loss.backward()
    options = {
        "show_values": True,
        "show_grads": True,
        "axis_labels": {len(SENTENCE): SENTENCE, len(FEATURES): FEATURES},
        "model": head,
        "title": f'one training step of the article\'s head on "{SENTENCES[0]}"',
    }
    return loss, options


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
    loss = F.cross_entropy(logits, tokens[:, 1:], axis=-1)  # class axis last: (1, T-1, V)
    loss.name = "loss"
    return loss, model


def transformer_block_step(seed: int = 0) -> tuple[Tensor, nn.Module]:
    """`transformer_block_loss` and its backward (the graph is released; the parameters
    hold their gradients). Returns `(loss, model)`."""
    loss, model = transformer_block_loss(seed)
    loss.backward()
    return loss, model


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
    the article's head (one training step, with its numbers) and a two-block transformer
    stack (collapsed by default). Raises RendererNotFound without a Graphviz renderer."""
    out_dir = Path(out_dir)
    head_loss, head_options = training_step_picture()
    stack_loss, stack = transformer_stack_step()
    pictures = [
        ("attention_graph", head_loss, head_options),
        (
            "transformer_stack",
            stack_loss,
            {"model": stack, "title": "two TransformerBlocks (E=32), drawn with default options"},
        ),
    ]
    written = []
    for stem, loss, options in pictures:
        for suffix in (".svg", ".png"):
            written.append(render_graph(loss, path=out_dir / f"{stem}{suffix}", **options))
    return written


def replay_example(out_dir: str | Path, model: str = "head") -> Path:
    """`python -m tinygrad_attn replay [--model head|transformer]`: the backward pass of the
    article's head ("The earth is like an orange", the loss pulling "orange" towards the
    fruit sense), or of a small model around a transformer block (its modules collapsed),
    replayed in `out_dir/backward.html`. Returns the page's path."""
    if model == "head":
        manual_seed(0)
        head = nn.SelfAttention(len(FEATURES))
        loss = sense_loss(head, SENTENCES[0])
        title = f'one backward pass of a self-attention head: "{SENTENCES[0]}"'
        options = {
            "axis_labels": {len(SENTENCE): SENTENCE, len(FEATURES): FEATURES},
            "model": head,
        }
    elif model == "transformer":
        loss, block_model = transformer_block_loss()
        title = "one backward pass of a small model around a transformer block"
        words = SENTENCE[:-1]  # the model reads these five and predicts the next
        vocab = sorted(set(SENTENCE))
        options = {
            "model": block_model,
            "collapse_depth": 2,
            "axis_labels": {len(words): words, len(vocab): vocab},
        }
    else:
        raise ValueError(f"replay: --model {model!r}; use 'head' or 'transformer'")
    return replay_backward(loss, Path(out_dir) / "backward.html", title=title, **options)


# ====================================================================== the demo command
def run(out_dir: str = "out") -> int:
    """The article, runnable: attention tables, one training step drawn, gradients checked.

    Writes `out_dir/attention_graph.svg` and `.png`. Returns 0 (errors propagate, with the
    message of whatever failed: a renderer missing, a gradient check).
    """
    print("1. Attention with no learned matrices (the article's first idea)")
    show_plain_attention()

    print("2. Query, Key and Value: nn.SelfAttention, learned matrices (random before training)")
    manual_seed(0)
    head = nn.SelfAttention(len(FEATURES))
    print(f"   {head!r}".replace("\n", "\n   "))
    show_head_attention(head, "untrained")

    print("3. Forward and backward of one training example (drawn, with its numbers)")
    loss, options = training_step_picture(head)
    print(
        f"   loss = {loss.item():.4f}; gradient norms: "
        + ", ".join(f"{name} {np.linalg.norm(p.grad):.3g}" for name, p in head.named_parameters())
    )
    out = Path(out_dir)
    for suffix in (".svg", ".png"):
        path = render_graph(loss, path=out / f"attention_graph{suffix}", **options)
        print(f"   wrote {path}")
    print("   green: forward, red: backward (gradients reach the Q/K/V weights), blue: X")
    print("   heat maps: purple < 0 < orange; attention weights white (0) to orange (1)\n")

    print("4. Training the head: 'orange' should come out as fruit, then as colour")
    head.zero_grad()
    losses = train_article_head(head)
    print(f"   Adam, {len(losses)} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(
        f"   watch these {len(losses)} steps one by one: python -m tinygrad_attn learn --out "
        f"{out_dir}  (writes {Path(out_dir) / 'learn_head.html'})\n"
    )
    show_head_attention(head, "trained")

    print("5. Gradient check of the head (float64, central differences)")
    check_head_gradients()
    print("   SelfAttention: X, query.weight, key.weight, value.weight agree with numerics: OK")
    return 0
