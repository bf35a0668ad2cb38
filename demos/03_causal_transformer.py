"""A small causal transformer learns to reverse a sequence of digits.

Token + position embeddings, two pre-norm TransformerBlocks (causal multi-head attention and an
MLP), a final LayerNorm and a Linear head over the 11 tokens (digits and a separator). Trained
on `d1 .. d6 SEP d6 .. d1` with next-token cross-entropy on the answer half, fresh random
batches; evaluated by greedy decoding on held-out sequences (whole sequences right). The loop
and the decoding are in this file; the data and the model are in
tinygrad_attn/examples/digits.py, which `python -m tinygrad_attn learn` records too.

    python demos/03_causal_transformer.py [--steps 100] [--digits 6] [--layers 2]
"""

import argparse
import os
import time

# The matrices here are tiny: several BLAS threads cost more than they save, and on a busy
# machine they spin against other processes (5-7x slower). Set the variable to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import tinygrad_attn as ta  # noqa: E402
from tinygrad_attn import functional as F  # noqa: E402
from tinygrad_attn import optim  # noqa: E402

# The data and the model (written once, in the package: `python -m tinygrad_attn learn --model
# transformer` records this same training). Read them there: tinygrad_attn/examples/digits.py.
from tinygrad_attn.examples.digits import (  # noqa: E402
    SEPARATOR,
    TinyTransformer,
    reverse_examples,
)


def generate(model: TinyTransformer, first: np.ndarray) -> np.ndarray:
    """Greedy decoding: given digits (N, n), the model's n next tokens after SEP, one at a time."""
    seq = np.concatenate([first, np.full((len(first), 1), SEPARATOR)], axis=1)  # (N, n+1)
    with ta.no_grad():
        for _ in range(first.shape[1]):
            logits = model(seq)  # (N, T, V)
            next_token = logits[:, -1].argmax(dim=-1).numpy()  # (N,)
            seq = np.concatenate([seq, next_token[:, None]], axis=1)
    return seq[:, first.shape[1] + 1 :]  # (N, n)


def held_out_accuracy(model: TinyTransformer, test: np.ndarray, digits: int) -> tuple:
    """(whole sequences right, digits right) by greedy decoding."""
    right = generate(model, test[:, :digits]) == test[:, digits + 1 :]  # (N, n)
    return float(right.all(axis=1).mean()), float(right.mean())


def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--digits", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--embed-dim", type=int, default=32)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--test-size", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    digits = args.digits

    start = time.perf_counter()
    ta.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = TinyTransformer(11, 2 * digits + 1, args.embed_dim, args.heads, args.layers)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    test = reverse_examples(np.random.default_rng(args.seed + 1000), args.test_size, digits)
    for step in range(1, args.steps + 1):
        seq = reverse_examples(rng, args.batch_size, digits)  # (B, 2n+1)
        logits = model(seq[:, :-1])  # (B, 2n, V): position t predicts token t+1
        answer_logits = logits[:, digits:]  # (B, n, V): predictions after SEP
        loss = F.cross_entropy(answer_logits, seq[:, digits + 1 :], axis=-1)  # (B, n, V)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 25 == 0 or step == args.steps:
            seq_acc, digit_acc = held_out_accuracy(model, test, digits)
            print(
                f"step {step:4d}  loss {loss.item():.4f}  held-out: sequences "
                f"{seq_acc:.3f}, digits {digit_acc:.3f}  ({time.perf_counter() - start:.1f} s)"
            )
    accuracy, _ = held_out_accuracy(model, test, digits)
    print(
        f"\nheld-out sequences reversed exactly: {accuracy:.1%} after {args.steps} steps "
        f"({time.perf_counter() - start:.1f} s)"
    )
    fresh = reverse_examples(np.random.default_rng(7), 5, digits)
    for seq, got in zip(fresh, generate(model, fresh[:, :digits])):
        want = seq[digits + 1 :]
        mark = "ok" if np.array_equal(got, want) else f"WRONG (want {''.join(map(str, want))})"
        print(f"  {''.join(map(str, seq[:digits]))} -> {''.join(map(str, got))}  {mark}")
    return accuracy


if __name__ == "__main__":
    main()
