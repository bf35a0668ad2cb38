"""The reference article, step by step: two sentences, two meanings of "orange".

1. Attention with no learned matrices: hand-made word embeddings (round, fruit, colour, planet,
   bright), scores = X X^T, softmax per row, each word's vector mixed with what it attends to.
   The two "orange"s start identical and come out different.
2. The same with Query, Key and Value matrices (`nn.SelfAttention`), trained with Adam so that
   "orange" comes out as the fruit in the first sentence, the colour in the second, and as
   neither on its own: the head learns to look at "earth", and at "bright" and "color".

    python demos/01_article_walkthrough.py

(`python -m tinygrad_attn demo` runs the same walkthrough, draws one training step's graph and
checks the head's gradients. The sentences and embeddings live in `tinygrad_attn.examples`.)
"""

from tinygrad_attn import examples

print("Attention without learned matrices")
examples.show_plain_attention()

print("With Query, Key and Value (nn.SelfAttention; value.weight starts at zero)")
head = examples.new_head(seed=0)
examples.show_head_attention(head, "untrained")
losses = examples.train_article_head(head)
print(f"Adam, {len(losses)} steps: loss {losses[0]:.4f} -> {losses[-1]:.2g}\n")
examples.show_head_attention(head, "trained")
