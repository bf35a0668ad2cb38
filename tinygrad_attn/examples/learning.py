"""The three recorded training runs of `python -m tinygrad_attn learn`.

Each function below is an ordinary training loop with a `Recorder` beside it (the way a user
would record their own loop), and returns the recorder:

- `record_article_head`: the README walkthrough: the article's head (`article.new_head`)
  trained with Adam (`article.train_article_head`'s settings) to read "orange" as the fruit in
  "The earth is like an orange", as the colour in "Orange is a bright color", and as neither
  alone;
- `record_orange_classifier`: demo 2's classifier (orange.py) on generated sentences, with two
  probe sentences drawn each frame;
- `record_transformer`: demo 3's causal transformer (digits.py) learning to reverse digits,
  with one probe sequence's attention per layer and head.

Frame `s` shows the state at the start of step `s`: the parameters after `s` updates, the
attention and loss of that forward pass, and the gradients the optimizer is about to apply.
The last frame (step == steps) is the trained model.

`main(out_dir, model)` is the command. This module trains small models and records them; the
library never imports it (the pictures draw; they do not train).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .. import functional as F
from .. import manual_seed, no_grad, optim
from ..runtime import openblas_threads  # noqa: F401  (tests import it from here too)
from ..viz.learn import LearningPage
from ..viz.record import Recorder
from .article import (
    FEATURES,
    LR,
    QK_DIMS,
    SENTENCES,
    STEPS,
    TRAINING,
    new_head,
    sense_loss,
    tokenize,
)
from .digits import SEPARATOR, TinyTransformer, reverse_examples
from .orange import SENSE_NAMES, VOCAB, OrangeSenseModel, orange_sentences

MODELS = ("head", "classifier", "transformer")


# ------------------------------------------------------------------ 1. the article's head
def record_article_head(steps: int = STEPS, lr: float = LR, seed: int = 0) -> Recorder:
    """The README walkthrough's training, recorded at every step."""
    head = new_head(seed)
    opt = optim.Adam(head.parameters(), lr=lr)
    rec = Recorder(every=1, max_frames=200, title="The article's attention head learning")
    for sentence in SENTENCES:
        rec.label(sentence, tokenize(sentence))
    # a Linear weight: a row per output feature, a column per input feature (X's)
    rec.label("query.weight", QK_DIMS, FEATURES)
    rec.label("key.weight", QK_DIMS, FEATURES)
    rec.label("value.weight", FEATURES, FEATURES)
    rec.note("query.weight", "Q = X Wqᵀ: what each word looks for (rows d1…d5: Q's columns)")
    rec.note("key.weight", "K = X Wkᵀ: what each word offers to be found by (rows: K's columns)")
    rec.note("value.weight", "V = X Wvᵀ: what each word passes on (starts at zero)")
    for step in range(steps + 1):
        opt.zero_grad()
        parts, tables = {}, {}
        for sentence in TRAINING:  # training_loss, one sentence at a time: each table is kept
            parts[sentence] = sense_loss(head, sentence)
            tables[sentence] = head.attn_weights  # (T, T)
        loss = parts[TRAINING[0]]
        for sentence in TRAINING[1:]:
            loss = loss + parts[sentence]
        loss.backward()
        rec.record(
            step,
            loss=loss,
            attention={sentence: tables[sentence] for sentence in SENTENCES},
            params=head.named_parameters(),
            values={f"loss on “{sentence}”": parts[sentence] for sentence in TRAINING},
            force=step == steps,
        )
        if step < steps:  # the last frame only looks at the trained head
            opt.step()
    return rec


# ------------------------------------------------------------------ 2. demo 2's classifier
PROBES = ("she ate a sweet orange", "i wear an orange shirt")


def record_orange_classifier(
    steps: int = 120, train_size: int = 512, lr: float = 0.03, seed: int = 0
) -> Recorder:
    """Demo 2's training (full-batch Adam on generated sentences), recorded at every step,
    with where "orange" looks in two probe sentences and the held-out accuracy."""
    manual_seed(seed)
    ids, position, label = orange_sentences(train_size, seed=seed)  # (N, T), (N,), (N,)
    test_ids, test_position, test_label = orange_sentences(256, seed=seed + 1000)
    model = OrangeSenseModel(len(VOCAB))
    opt = optim.Adam(model.parameters(), lr=lr)
    probe_tokens = [p.split() for p in PROBES]
    probe_ids = np.array([[VOCAB.index(w) for w in words] for words in probe_tokens])  # (2, T)
    probe_at = np.array([words.index("orange") for words in probe_tokens])  # (2,)
    rec = Recorder(every=1, max_frames=200, title="Demo 2: learning which “orange” is meant")
    for probe, words in zip(PROBES, probe_tokens):
        rec.label(probe, words)
        rec.note(probe, "a probe sentence, not in the training data")
    rec.note("embed.weight", "one row per word of the vocabulary")
    rec.note("classify.weight", f"reads the attention output at “orange”: {SENSE_NAMES}")
    for step in range(steps + 1):
        opt.zero_grad()
        logits = model(ids, position)  # (N, 2)
        loss = F.cross_entropy(logits, label)
        loss.backward()
        if rec.due(step) or step == steps:
            with no_grad():
                probe_logits = model(probe_ids, probe_at)  # (2, 2)
                tables = model.attn.attn_weights._data  # (2, T, T)
                test_logits = model(test_ids, test_position)  # (M, 2)
            accuracy = float((test_logits._data.argmax(-1) == test_label).mean())
            chance = np.exp(probe_logits._data - probe_logits._data.max(-1, keepdims=True))
            chance /= chance.sum(-1, keepdims=True)  # (2, 2) softmax
            rec.record(
                step,
                loss=loss,
                attention={p: tables[i] for i, p in enumerate(PROBES)},
                params=model.named_parameters(),
                values={
                    "held-out accuracy": accuracy,
                    f"P(fruit) for “{PROBES[0]}”": chance[0, 0],
                    f"P(colour) for “{PROBES[1]}”": chance[1, 1],
                },
                force=step == steps,
            )
        if step < steps:
            opt.step()
    return rec


# ------------------------------------------------------------------ 3. demo 3's transformer
def transformer_attention(model: TinyTransformer, ids: np.ndarray) -> list[np.ndarray]:
    """Each block's attention table `(B, H, T, T)` for `ids (B, T)`, replaying the model's
    forward without a graph (`MultiHeadAttention` computes it inside one fused op)."""
    tables = []
    with no_grad():
        x = model.tokens(ids) + model.positions(np.arange(ids.shape[-1]))  # (B, T, E)
        for block in model.blocks:
            attn = block.attn
            a = block.ln1(x)  # (B, T, E)
            split = (*a.shape[:-1], attn.num_heads, attn.head_dim)
            q = attn.q_proj(a).reshape(*split).swapaxes(-2, -3)  # (B, H, T, D)
            k = attn.k_proj(a).reshape(*split).swapaxes(-2, -3)  # (B, H, T, D)
            tables.append(F.attention_weights(q, k, is_causal=attn.is_causal)._data)  # (B,H,T,T)
            x = block(x)  # (B, T, E)
    return tables


def record_transformer(
    steps: int = 100, digits: int = 6, batch_size: int = 64, lr: float = 3e-3, seed: int = 0
) -> Recorder:
    """Demo 3's training (reverse `digits` digits), recorded every 2nd step: one probe
    sequence's attention per layer and head, the attention projections of each block."""
    manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = TinyTransformer(11, 2 * digits + 1)
    opt = optim.Adam(model.parameters(), lr=lr)
    test = reverse_examples(np.random.default_rng(seed + 1000), 200, digits)  # (M, 2n+1)
    first = np.array([2, 7, 4, 9, 1, 6, 3, 8, 5, 0][:digits])
    probe = np.concatenate([first, [SEPARATOR], first[::-1][:-1]])[None]  # (1, 2n)
    words = [str(d) for d in first] + ["|"] + [f"{d}′" for d in first[::-1][:-1]]
    shown = [
        f"blocks.{b}.attn.{p}.weight"
        for b in range(len(model.blocks))
        for p in ("q_proj", "k_proj")
    ]
    rec = Recorder(
        every=2, max_frames=200, title="Demo 3: a causal transformer learning to reverse"
    )
    for b in range(len(model.blocks)):
        rec.label(f"layer {b}", words)
        rec.note(
            f"layer {b}",
            f"the probe {''.join(words[:digits])} | {''.join(map(str, first[::-1]))}: row "
            "t is the position predicting token t+1; causal, so only the past is seen",
        )
    named = dict(model.named_parameters())
    for step in range(steps + 1):
        seq = reverse_examples(rng, batch_size, digits)  # (B, 2n+1)
        logits = model(seq[:, :-1])  # (B, 2n, V): position t predicts token t+1
        loss = F.cross_entropy(logits[:, digits:], seq[:, digits + 1 :], axis=-1)
        opt.zero_grad()
        loss.backward()
        if rec.due(step) or step == steps:
            tables = transformer_attention(model, probe)
            with no_grad():
                guess = model(test[:, :-1])._data[:, digits:].argmax(-1)  # (M, n)
            right = float((guess == test[:, digits + 1 :]).mean())
            rec.record(
                step,
                loss=loss,
                attention={f"layer {b}": t[0] for b, t in enumerate(tables)},
                params={name: named[name] for name in shown},
                values={"held-out digits right (given the true prefix)": right},
                force=step == steps,
            )
        if step < steps:
            opt.step()
    return rec


# ------------------------------------------------------------------ the command
DESCRIPTIONS = {
    "classifier": (
        "Demo 2: Embedding → one attention head → Linear, reading only the head's output at "
        "“orange”. Since “orange” has one embedding, the model can tell fruit from colour only "
        "by attending to the context word (“ate”, “sweet” … or “wear”, “shirt” …)."
    ),
    "transformer": (
        "Demo 3: two causal transformer blocks (2 heads each) learning to reverse 6 digits. "
        "After the separator, each position should attend to the digit it must copy next: "
        "watch the anti-diagonal appear in one of the heads."
    ),
}


def orange_looks(rec: Recorder, frame: int = -1) -> tuple[float, float]:
    """The weight "orange" gives "earth" in the first sentence, and "bright" + "color" in the
    second, at a frame of the article head's run."""
    first, second = (rec.frames[frame].attention[s] for s in SENTENCES)  # (T, T) each
    one, two = tokenize(SENTENCES[0]), tokenize(SENTENCES[1])
    earth = float(first[one.index("orange"), one.index("earth")])
    context = second[two.index("orange"), [two.index("bright"), two.index("color")]]
    return earth, float(context.sum())


def describe_head_run(rec: Recorder) -> str:
    """What the article head's page shows, with the run's own numbers."""
    earth, context = orange_looks(rec)
    last = rec.frames[-1]
    return (
        "The article's single attention head, softmax(Q Kᵀ / √d) V, trained with Adam: "
        "“orange” should come out as the fruit (and not the colour) in the first sentence, as "
        "the colour in the second, and as neither on its own. value.weight starts at zero, so "
        "at step 0 every word attends about evenly and only value.weight has a gradient. Once "
        "V passes something on, the “orange” rows move to the context: by step "
        f"{last.step} “orange” gives “earth” {earth:.2f} in the first sentence and “bright” + "
        f"“color” {context:.2f} in the second; the loss is {last.loss:.1g}."
    )


def record(model: str) -> Recorder:
    """The recorded run for `model` (one of MODELS)."""
    runs = {
        "head": record_article_head,
        "classifier": record_orange_classifier,
        "transformer": record_transformer,
    }
    if model not in runs:
        raise ValueError(f"learn: unknown model {model!r}; choose one of {', '.join(MODELS)}")
    return runs[model]()


def learning_page(model: str = "head") -> LearningPage:
    """Train `model`, record it, and return its page."""
    rec = record(model)
    focus = None if model == "transformer" else "orange"
    description = describe_head_run(rec) if model == "head" else DESCRIPTIONS[model]
    return rec.page(focus=focus, description=description)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """Run with one OpenBLAS thread (NumPy's bundled OpenBLAS), unless OPENBLAS_NUM_THREADS
    is in effect. The matrices here are tiny: extra BLAS threads cost more than they save, and
    on a busy machine they spin against other processes (demo 3: 1.5 s alone, 25 s measured
    once on a loaded 2-core box). The variable cannot help once NumPy is imported, as it is by
    the time a command runs, so this asks the library itself. The variable counts as in effect
    when the library runs that many threads (set after NumPy's import, e.g. by a demo script
    run in the same process, it is not). Without the library's functions, nothing changes."""
    get, set_ = openblas_threads()
    before = get() if get is not None else None
    if set_ is None or before is None or os.environ.get("OPENBLAS_NUM_THREADS") == str(before):
        yield
        return
    set_(1)
    try:
        yield
    finally:
        set_(before)


def main(out_dir: str = "out", model: str = "head") -> int:
    """`python -m tinygrad_attn learn`: train, record, write `out_dir/learn_<model>.html`."""
    start = time.perf_counter()
    with one_blas_thread():
        page = learning_page(model)
    path = page.save(Path(out_dir) / f"learn_{model}.html")
    seconds = time.perf_counter() - start
    frames = len(page.data["steps"])
    size = path.stat().st_size / 1e6
    print(f"wrote {path}  ({frames} frames, {size:.2f} MB, trained and written in {seconds:.1f} s)")
    print(
        f"open it in a browser (file://{path.resolve()}): drag the slider or press → / ← to "
        "step through training, Space plays"
    )
    return 0


__all__ = [
    "MODELS",
    "learning_page",
    "main",
    "record",
    "record_article_head",
    "record_orange_classifier",
    "record_transformer",
    "transformer_attention",
    "describe_head_run",
    "orange_looks",
]
