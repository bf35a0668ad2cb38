"""Learning to tell "orange" the fruit from "orange" the colour, from context alone.

Generated sentences of six words: "orange" somewhere, one or two words of its sense ("juicy",
"peel" ... or "paint", "dress" ...) elsewhere, filler words ("the", "was" ...) in the rest. The
model is Embedding -> one self-attention head -> Linear, and the classifier reads only the
head's output at the "orange" position: since "orange" has a single embedding, the only way to
get the sense right is to attend to the right word. Trained with Adam; held-out sentences use
another seed.

    python demos/02_learning_orange.py
"""

import os

# The matrices here are tiny: several BLAS threads cost more than they save, and on a busy
# machine they spin against other processes (5-7x slower). Set the variable to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from tinygrad_attn import demo  # noqa: E402

result = demo.train_orange(log=print)
print(
    f"\nheld-out accuracy {result.accuracy:.1%} after {result.steps} steps "
    f"({result.seconds:.1f} s); without attention it could not beat 50%"
)
print("\nwhere 'orange' looks, in fresh sentences:")
fresh = demo.make_orange_data(4, seed=123)
for i in range(4):
    print(demo.orange_attention(result.model, fresh, i))
