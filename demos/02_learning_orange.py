"""Learning to tell "orange" the fruit from "orange" the colour, from context alone.

Generated sentences of six words: "orange" somewhere, one or two words of its sense ("juicy",
"peel" ... or "paint", "dress" ...) elsewhere, filler words ("the", "was" ...) in the rest. The
model is Embedding -> one self-attention head -> Linear, and the classifier reads only the
head's output at the "orange" position: since "orange" has a single embedding, the only way to
get the sense right is to attend to the right word. Trained with Adam (full batch); held-out
sentences use another seed. The loop is in this file; the data and the model are in
tinygrad_attn/examples/orange.py, which `python -m tinygrad_attn learn` records too.

    python demos/02_learning_orange.py [--steps 120] [--embed-dim 8] [--seed 0]
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
# classifier` records this same training). Read them there: tinygrad_attn/examples/orange.py.
from tinygrad_attn.examples.orange import (  # noqa: E402
    SENSE_NAMES,
    VOCAB,
    OrangeSenseModel,
    orange_sentences,
)


def accuracy(logits: ta.Tensor, labels: np.ndarray) -> float:
    return (logits.argmax(dim=-1) == ta.tensor(labels)).float().mean().item()


def where_orange_looks(model: OrangeSenseModel, ids, position, label, i: int) -> str:
    """One sentence, the predicted sense, and where "orange" looked (its attention row)."""
    with ta.no_grad():
        logits = model(ids[i : i + 1], position[i : i + 1])  # (1, 2)
    row = model.attn.attn_weights[0, position[i]].tolist()  # (T,)
    words = [VOCAB[t] for t in ids[i]]
    looked = "  ".join(f"{w} {a:.2f}" for w, a in zip(words, row))
    guess = SENSE_NAMES[logits.argmax()]
    return f'"{" ".join(words)}" -> {guess} (true: {SENSE_NAMES[label[i]]})\n    {looked}'


# ----------------------------------------------------------------------------- training
def main(argv=None) -> float:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--train-size", type=int, default=512)
    parser.add_argument("--test-size", type=int, default=512)
    parser.add_argument("--embed-dim", type=int, default=8)
    parser.add_argument("--lr", type=float, default=0.03)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    start = time.perf_counter()
    ta.manual_seed(args.seed)
    ids, position, label = orange_sentences(args.train_size, seed=args.seed)
    test_ids, test_position, test_label = orange_sentences(args.test_size, seed=args.seed + 1000)
    model = OrangeSenseModel(len(VOCAB), args.embed_dim)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    for step in range(1, args.steps + 1):
        opt.zero_grad()
        logits = model(ids, position)  # (N, 2)
        loss = F.cross_entropy(logits, label)
        loss.backward()
        opt.step()
        if step % 20 == 0 or step == args.steps:
            with ta.no_grad():
                held_out = accuracy(model(test_ids, test_position), test_label)
            print(
                f"step {step:4d}  loss {loss.item():.4f}  train acc "
                f"{accuracy(logits, label):.3f}  held-out acc {held_out:.3f}"
            )
    with ta.no_grad():
        held_out = accuracy(model(test_ids, test_position), test_label)
    print(
        f"\nheld-out accuracy {held_out:.1%} after {args.steps} steps "
        f"({time.perf_counter() - start:.1f} s); without attention it could not beat 50%"
    )
    print("\nwhere 'orange' looks, in fresh sentences:")
    fresh = orange_sentences(4, seed=123)
    for i in range(4):
        print(where_orange_looks(model, *fresh, i))
    return held_out


if __name__ == "__main__":
    main()
