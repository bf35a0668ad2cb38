"""`python -m tinygrad_attn demo`: the reference article made runnable.

The attention tables of both sentences without learned matrices, then with a Query/Key/Value
head before and after its training, one training step of the trained head drawn with its
numbers, and the head's gradients checked. It prints and draws; the example itself lives in
article.py, the pictures in pictures.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..viz import render_graph
from .article import (
    STEPS,
    check_head_gradients,
    new_head,
    show_head_attention,
    show_plain_attention,
    train_article_head,
)
from .pictures import training_step_picture


def run(out_dir: str = "out") -> int:
    """The article, runnable: attention tables, the head trained, one training step drawn,
    gradients checked.

    Writes `out_dir/attention_graph.svg` and `.png`. Returns 0 (errors propagate, with the
    message of whatever failed: a renderer missing, a gradient check).
    """
    print("1. Attention with no learned matrices (the article's first idea)")
    show_plain_attention()

    print("2. Query, Key and Value: nn.SelfAttention, learned matrices")
    head = new_head()
    print(f"   {head!r}".replace("\n", "\n   "))
    print("   value.weight starts at zero: the head passes nothing on until it learns what to\n")
    show_head_attention(head, "untrained")

    print("3. Training: 'orange' should come out as the fruit, then as the colour, and alone")
    print("   as neither (only the context can tell)")
    losses = train_article_head(head)
    print(f"   Adam, {len(losses)} steps: loss {losses[0]:.4f} -> {losses[-1]:.2g}")
    print(
        f"   watch these {STEPS} steps one by one: python -m tinygrad_attn learn --out "
        f"{out_dir}  (writes {Path(out_dir) / 'learn_head.html'})\n"
    )
    show_head_attention(head, "trained")

    print("4. Forward and backward of one training example, drawn with its numbers")
    loss, options = training_step_picture(head)
    print(
        f"   loss = {loss.item():.2g}; gradient norms: "
        + ", ".join(f"{name} {np.linalg.norm(p.grad):.2g}" for name, p in head.named_parameters())
    )
    out = Path(out_dir)
    for suffix in (".svg", ".png"):
        path = render_graph(loss, path=out / f"attention_graph{suffix}", **options)
        print(f"   wrote {path}")
    print("   green: forward, red: backward (gradients reach the Q/K/V weights), blue: X")
    print("   heat maps: purple < 0 < orange; attention weights white (0) to orange (1)\n")

    print("5. Gradient check of the head (float64, central differences)")
    check_head_gradients()
    print("   SelfAttention: X, query.weight, key.weight, value.weight agree with numerics: OK")
    return 0
