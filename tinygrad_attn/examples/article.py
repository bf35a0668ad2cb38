"""The reference article's example: its sentences, word embeddings, and the head that learns.

"The earth is like an orange" and "Orange is a bright color": the same word, two meanings, and
attention is what tells them apart. The demo command, the README, the pictures, the replay and
learning pages and `demos/01_article_walkthrough.py` all read them from here:

- the article's first attention with no learned matrices (`similarity_attention`);
- a Query/Key/Value head (`nn.SelfAttention`, `new_head`) and what teaches it the two senses:
  `sense_loss` on each sentence of `TRAINING` ("orange" should come out as the fruit and not the
  colour in the first sentence, the other way round in the second, and as neither alone),
  `training_loss`, `train_article_head`;
- `HEAD_AXES`: what the axes of the head's tensors are, for the pictures' labels.

This module builds the article's small example only; it draws nothing (pictures.py does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .. import functional as F
from .. import nn, optim
from ..autograd.gradcheck import gradcheck
from ..state import get_default_dtype, manual_seed, no_grad, set_default_dtype
from ..tensor import Tensor

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

# What "orange" means in each sentence (the article: the fruit, then the colour).
SENSES = {SENTENCES[0]: "fruit", SENTENCES[1]: "colour", "orange": None}
# What the head is trained on: the two sentences, and the word alone, which could mean either
# (so the head cannot answer from "orange" itself: only the context tells).
TRAINING = (*SENTENCES, "orange")


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


def sense_target(sentence: str, dtype: object = None) -> np.ndarray:
    """What the head should make of "orange" in `sentence`, as a feature vector: +1 on the
    meant sense, -1 on the other one (the fruit and not the colour), zeros where the sentence
    does not say (the word alone)."""
    target = np.zeros(len(FEATURES), dtype=dtype or get_default_dtype())
    sense = SENSES[sentence]
    if sense is not None:
        other = "colour" if sense == "fruit" else "fruit"
        target[FEATURES.index(sense)], target[FEATURES.index(other)] = 1, -1
    return target


def sense_loss(head: nn.SelfAttention, sentence: str) -> Tensor:
    """How far the head's output for "orange" is from `sense_target(sentence)` (MSE)."""
    tokens = tokenize(sentence)
    x = Tensor(embed(tokens, head.query.weight.dtype), name="X")  # (T, F), no gradient: blue
    out = head(x)  # (T, F)
    target = Tensor(sense_target(sentence, x.dtype), name="target")  # (F,)
    loss = F.mse_loss(out[tokens.index("orange")], target)
    loss.name = "loss"
    return loss


def training_loss(head: nn.SelfAttention) -> Tensor:
    """The sum of `sense_loss` over the sentences of `TRAINING`."""
    total = sense_loss(head, TRAINING[0])
    for sentence in TRAINING[1:]:
        total = total + sense_loss(head, sentence)
    return total


def new_head(seed: int = 0) -> nn.SelfAttention:
    """The article's head, seeded, with its value matrix at zero: it passes nothing on until it
    has learned what to, so attention only moves once what it would fetch is worth fetching
    (and rises steadily, instead of first chasing random values)."""
    manual_seed(seed)
    head = nn.SelfAttention(len(FEATURES))
    nn.init.zeros_(head.value.weight)
    return head


STEPS, LR = 100, 0.01  # Adam: by step 100, "orange" gives "earth" and "bright" + "color" 0.97


def train_article_head(head: nn.SelfAttention, steps: int = STEPS, lr: float = LR) -> list:
    """Adam on `training_loss`; returns the loss after each step."""
    opt = optim.Adam(head.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = training_loss(head)
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
# What the axes of the head's tensors are: X has a row per word and a column per feature, and
# the target (the sense "orange" should take) is a feature vector. The pictures label every
# other axis from these (a weight's columns are X's features, value.weight's rows the target's).
# Queries and keys are compared in a space of their own, learned: its axes are numbered.
QK_DIMS = tuple(f"d{i + 1}" for i in range(len(FEATURES)))
HEAD_AXES = {"X": (SENTENCE, FEATURES), "Q": (None, QK_DIMS), "target": (FEATURES,)}
