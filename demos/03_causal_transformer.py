"""A small causal transformer learns to reverse a sequence of digits.

Token + position embeddings, two pre-norm TransformerBlocks (causal multi-head attention and an
MLP), a final LayerNorm and a Linear head over the 11 tokens (digits and a separator). Trained
on `d1 .. d6 SEP d6 .. d1` with next-token cross-entropy on the answer half; evaluated by
greedy decoding on held-out sequences (whole sequences right).

    python demos/03_causal_transformer.py
"""

import os

# The matrices here are tiny: several BLAS threads cost more than they save, and on a busy
# machine they spin against other processes (5-7x slower). Set the variable to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tinygrad_attn import demo  # noqa: E402

result = demo.train_reverse(log=print)
print(
    f"\nheld-out sequences reversed exactly: {result.accuracy:.1%} after {result.steps} steps "
    f"({result.seconds:.1f} s)"
)
print(demo.show_reversals(result.model, digits=6))
