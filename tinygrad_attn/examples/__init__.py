"""The examples the demos, the pictures, the pages and the README are made of.

- article.py: the reference article's sentences, word embeddings and the head that learns
  to tell "orange" the fruit from "orange" the colour (its loss, its training);
- pictures.py: that head drawn with its numbers, small transformers drawn collapsed and
  expanded, the replayed backward passes (`python -m tinygrad_attn graph` and `replay`);
- demo.py: `python -m tinygrad_attn demo`;
- orange.py, digits.py: the data and models of demos 2 and 3 (the scripts own their loops);
- learning.py: the recorded training runs of `python -m tinygrad_attn learn`.

The names of article.py and pictures.py are here too (`examples.embed`, `examples.SENTENCES`,
`examples.training_step_picture`). This package defines nothing itself, and nothing in the
library imports it: viz draws, the examples train.
"""

from .article import (
    FEATURES,
    HEAD_AXES,
    LR,
    QK_DIMS,
    SENSES,
    SENTENCE,
    SENTENCES,
    STEPS,
    TRAINING,
    WORD_FEATURES,
    SentenceAttention,
    check_head_gradients,
    describe_attention,
    embed,
    format_table,
    head_attention,
    new_head,
    sense_loss,
    sense_target,
    show_head_attention,
    show_plain_attention,
    similarity_attention,
    tokenize,
    train_article_head,
    training_loss,
)
from .demo import run
from .pictures import (
    TinyLanguageModel,
    backward_as_ops_picture,
    model_gradient_picture,
    render_examples,
    replay_example,
    trained_head,
    training_step_picture,
    transformer_block_loss,
    transformer_block_step,
    transformer_stack_step,
)

__all__ = [
    "FEATURES",
    "HEAD_AXES",
    "LR",
    "QK_DIMS",
    "SENSES",
    "SENTENCE",
    "SENTENCES",
    "STEPS",
    "TRAINING",
    "WORD_FEATURES",
    "SentenceAttention",
    "TinyLanguageModel",
    "backward_as_ops_picture",
    "check_head_gradients",
    "describe_attention",
    "embed",
    "format_table",
    "head_attention",
    "model_gradient_picture",
    "new_head",
    "render_examples",
    "replay_example",
    "run",
    "sense_loss",
    "sense_target",
    "show_head_attention",
    "show_plain_attention",
    "similarity_attention",
    "tokenize",
    "train_article_head",
    "trained_head",
    "training_loss",
    "training_step_picture",
    "transformer_block_loss",
    "transformer_block_step",
    "transformer_stack_step",
]
