"""The reference article made runnable, and the small training runs of the demos.

`run(out_dir)` is `python -m tinygrad_attn demo`: the sentences "The earth is like an orange" and
"Orange is a bright color" through attention without learned matrices (the article's first
idea: dot products of hand-made embeddings, softmax, mix), then through a Query/Key/Value head
(`nn.SelfAttention`); one training step of that head drawn as a graph; the head trained a
little; its gradients checked. The scripts in `demos/` call the functions below, so the code
shown there and the code tested here are the same.

This module builds small models, data and printouts; nothing in the library imports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import functional as F
from . import nn, optim
from .gradcheck import gradcheck
from .state import no_grad
from .tensor import Tensor, get_default_dtype, manual_seed, set_default_dtype

Log = Callable[[str], None]


def _quiet(_line: str) -> None:
    pass


# =============================================================================== the article
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
    return SentenceAttention(sentence, tokens, weights.data, mixed.data)


def head_attention(head: nn.SelfAttention, sentence: str) -> SentenceAttention:
    """`sentence` through a Query/Key/Value head (no graph recorded)."""
    tokens = tokenize(sentence)
    with no_grad():
        out = head(Tensor(embed(tokens)))  # (T, F)
    return SentenceAttention(sentence, tokens, head.attn_weights.data, out.data)


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


def run(out_dir: str = "out") -> int:
    """The article, runnable: attention tables, one training step drawn, gradients checked.

    Writes `out_dir/attention_graph.svg` and `.png`. Returns 0 (errors propagate, with the
    message of whatever failed: a renderer missing, a gradient check).
    """
    from .viz import render_graph  # drawing is this command's business, not the library's

    print("1. Attention with no learned matrices (the article's first idea)")
    show_plain_attention()

    print("2. Query, Key and Value: nn.SelfAttention, learned matrices (random before training)")
    manual_seed(0)
    head = nn.SelfAttention(len(FEATURES))
    print(f"   {head!r}".replace("\n", "\n   "))
    show_head_attention(head, "untrained")

    print("3. Forward and backward of one training example (drawn)")
    loss = sense_loss(head, SENTENCES[0])
    loss.backward()
    print(
        f"   loss = {loss.item():.4f}; gradient norms: "
        + ", ".join(f"{name} {np.linalg.norm(p.grad):.3g}" for name, p in head.named_parameters())
    )
    out = Path(out_dir)
    title = 'one training step of the article\'s head on "The earth is like an orange"'
    for suffix in (".svg", ".png"):
        path = render_graph(loss, path=out / f"attention_graph{suffix}", title=title)
        print(f"   wrote {path}")
    print("   green: forward, red: backward (gradients reach the Q/K/V weights), blue: X\n")

    print("4. Training the head: 'orange' should come out as fruit, then as colour")
    head.zero_grad()
    losses = train_article_head(head)
    print(f"   Adam, {len(losses)} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}\n")
    show_head_attention(head, "trained")

    print("5. Gradient check of the head (float64, central differences)")
    check_head_gradients()
    print("   SelfAttention: X, query.weight, key.weight, value.weight agree with numerics: OK")
    return 0


# ============================================================== demo 2: learning "orange"
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


@dataclass
class OrangeData:
    """Sentences as token ids `(N, T)`, where "orange" is in each `(N,)`, and its sense `(N,)`
    (0 fruit, 1 colour)."""

    ids: np.ndarray
    position: np.ndarray
    label: np.ndarray

    def sentence(self, i: int) -> str:
        return " ".join(VOCAB[t] for t in self.ids[i])


def make_orange_data(count: int, length: int = 6, seed: int = 0) -> OrangeData:
    """Random sentences of `length` words: "orange" at a random place, one or two words of its
    sense (fruit: "juicy", "peel", ...; colour: "paint", "dress", ...) elsewhere, filler words
    ("the", "was", ...) in the rest. Only the context words tell the two senses apart."""
    rng = np.random.default_rng(seed)
    filler = [VOCAB.index(w) for w in FILLER_WORDS]
    context = [[VOCAB.index(w) for w in FRUIT_WORDS], [VOCAB.index(w) for w in COLOUR_WORDS]]
    ids = rng.choice(filler, size=(count, length))  # (N, T)
    label = rng.integers(0, 2, size=count)  # (N,)
    position = np.empty(count, dtype=np.int64)
    for i in range(count):
        slots = rng.permutation(length)
        position[i] = slots[0]
        ids[i, slots[0]] = VOCAB.index("orange")
        for slot in slots[1 : 1 + rng.integers(1, 3)]:
            ids[i, slot] = rng.choice(context[label[i]])
    return OrangeData(ids, position, label)


class OrangeSenseModel(nn.Module):
    """Embedding -> one self-attention head -> Linear, read at the "orange" position.

    The classifier sees only the attention output at "orange", and "orange" has one embedding:
    it can tell the senses apart only through what "orange" attends to.
    """

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


@dataclass
class TrainResult:
    """What a demo's training run gives back: the model, the held-out accuracy, the time, and
    one line of progress per logging step."""

    model: nn.Module
    accuracy: float
    seconds: float
    steps: int
    history: list = field(default_factory=list)


def _accuracy(logits: Tensor, labels: np.ndarray) -> float:
    return float((logits.data.argmax(axis=-1) == labels).mean())


def train_orange(
    steps: int = 120,
    train_size: int = 512,
    test_size: int = 512,
    embed_dim: int = 8,
    lr: float = 0.03,
    seed: int = 0,
    log: Log = _quiet,
) -> TrainResult:
    """Train `OrangeSenseModel` with Adam (full batch) on generated sentences; returns the
    accuracy on held-out sentences (a different seed). Seeds the global generator with `seed`."""
    start = time.perf_counter()
    manual_seed(seed)
    train = make_orange_data(train_size, seed=seed)
    test = make_orange_data(test_size, seed=seed + 1000)
    model = OrangeSenseModel(len(VOCAB), embed_dim)
    opt = optim.Adam(model.parameters(), lr=lr)
    history = []
    for step in range(1, steps + 1):
        opt.zero_grad()
        logits = model(train.ids, train.position)  # (N, 2)
        loss = F.cross_entropy(logits, train.label)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == steps:
            with no_grad():
                test_acc = _accuracy(model(test.ids, test.position), test.label)
            line = (
                f"step {step:4d}  loss {loss.item():.4f}  train acc "
                f"{_accuracy(logits, train.label):.3f}  held-out acc {test_acc:.3f}"
            )
            history.append(line)
            log(line)
    with no_grad():
        accuracy = _accuracy(model(test.ids, test.position), test.label)
    return TrainResult(model, accuracy, time.perf_counter() - start, steps, history)


def orange_attention(model: OrangeSenseModel, data: OrangeData, i: int) -> str:
    """One sentence, the predicted sense, and where "orange" looked (its attention row)."""
    with no_grad():
        logits = model(data.ids[i : i + 1], data.position[i : i + 1])  # (1, 2)
    row = model.attn.attn_weights.data[0, data.position[i]]  # (T,)
    words = [VOCAB[t] for t in data.ids[i]]
    looked = "  ".join(f"{w} {a:.2f}" for w, a in zip(words, row))
    guess = SENSE_NAMES[int(logits.data.argmax())]
    return f'"{" ".join(words)}" -> {guess} (true: {SENSE_NAMES[data.label[i]]})\n    {looked}'


# ====================================================== demo 3: a small causal transformer
SEPARATOR = 10  # token id after the digits 0-9


class TinyTransformer(nn.Module):
    """Token + position embeddings -> causal TransformerBlocks -> LayerNorm -> Linear logits."""

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
    sep = np.full((count, 1), SEPARATOR)
    return np.concatenate([first, sep, first[:, ::-1]], axis=1)  # (N, 2n+1)


def generate_reverse(model: TinyTransformer, first: np.ndarray) -> np.ndarray:
    """Greedy decoding: given digits (N, n), the model's n next tokens after SEP, one at a time."""
    seq = np.concatenate([first, np.full((len(first), 1), SEPARATOR)], axis=1)  # (N, n+1)
    with no_grad():
        for _ in range(first.shape[1]):
            logits = model(seq)  # (N, T, V)
            next_token = logits.data[:, -1].argmax(axis=-1)  # (N,)
            seq = np.concatenate([seq, next_token[:, None]], axis=1)
    return seq[:, first.shape[1] + 1 :]  # (N, n)


def train_reverse(
    steps: int = 100,
    digits: int = 6,
    batch_size: int = 64,
    embed_dim: int = 32,
    num_heads: int = 2,
    num_layers: int = 2,
    lr: float = 3e-3,
    test_size: int = 500,
    seed: int = 0,
    log: Log = _quiet,
) -> TrainResult:
    """Train `TinyTransformer` to reverse `digits` digits (next-token cross-entropy on the
    answer half, fresh random batches); returns the held-out accuracy of whole sequences
    reversed correctly by greedy decoding. Seeds the global generator with `seed`."""
    start = time.perf_counter()
    manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = TinyTransformer(11, 2 * digits + 1, embed_dim, num_heads, num_layers)
    opt = optim.Adam(model.parameters(), lr=lr)
    test = reverse_examples(np.random.default_rng(seed + 1000), test_size, digits)
    history = []

    def held_out() -> tuple[float, float]:
        answer = generate_reverse(model, test[:, :digits])  # (N, n)
        right = answer == test[:, digits + 1 :]
        return float(right.all(axis=1).mean()), float(right.mean())

    for step in range(1, steps + 1):
        seq = reverse_examples(rng, batch_size, digits)  # (B, 2n+1)
        logits = model(seq[:, :-1])  # (B, 2n, V): position t predicts token t+1
        answer_logits = logits[:, digits:]  # (B, n, V): predictions after SEP
        loss = F.cross_entropy(answer_logits, seq[:, digits + 1 :])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0 or step == steps:
            seq_acc, digit_acc = held_out()
            line = (
                f"step {step:4d}  loss {loss.item():.4f}  held-out: sequences "
                f"{seq_acc:.3f}, digits {digit_acc:.3f}  ({time.perf_counter() - start:.1f} s)"
            )
            history.append(line)
            log(line)
    accuracy, _ = held_out()
    return TrainResult(model, accuracy, time.perf_counter() - start, steps, history)


def show_reversals(model: TinyTransformer, digits: int, count: int = 5, seed: int = 7) -> str:
    """A few fresh examples: input digits, the model's answer, right or wrong."""
    test = reverse_examples(np.random.default_rng(seed), count, digits)
    answer = generate_reverse(model, test[:, :digits])
    lines = []
    for seq, got in zip(test, answer):
        want = seq[digits + 1 :]
        mark = "ok" if np.array_equal(got, want) else f"WRONG (want {''.join(map(str, want))})"
        lines.append(f"  {''.join(map(str, seq[:digits]))} -> {''.join(map(str, got))}  {mark}")
    return "\n".join(lines)
