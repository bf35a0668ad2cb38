"""Functional forms, as `torch.nn.functional` (also importable as `tinygrad_attn.nn.functional`).

A file per kind: activations, linear, dropout, losses and cross_entropy, normalization,
attention, embedding, distance, padding, reductions. Most functions are written with Tensor ops,
so their gradient is the chain rule through the ops they call and every step shows up in a graph.
Where the maths is one step, the function validates its arguments and hands the work to one fused
node with a hand-derived backward: `linear`, `layer_norm`, `gelu`, `cross_entropy`
(`ops.layers`) and `scaled_dot_product_attention` (`ops.attention`). Each has a `*_composed`
twin with the same arguments and result, built from primitive ops, for reading and drawing every
step (`linear_composed`, `layer_norm_composed`, `gelu_composed`, `cross_entropy_composed`,
`attention_composed`).

This package must not subclass `Function`, touch `.grad`, or reach into an op's internals.
"""

from ._checks import _check_float, _reduce, _tensor  # noqa: F401  (used by torch_functions)
from .activations import (
    celu,
    elu,
    gelu,
    gelu_composed,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softsign,
    tanh,
    tanhshrink,
    threshold,
)
from .attention import attention_composed, attention_weights, scaled_dot_product_attention
from .cross_entropy import cross_entropy, cross_entropy_composed, nll_loss
from .distance import cosine_similarity, pairwise_distance
from .dropout import dropout
from .embedding import embedding, one_hot
from .linear import linear, linear_composed
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    huber_loss,
    kl_div,
    l1_loss,
    mse_loss,
    smooth_l1_loss,
)
from .normalization import layer_norm, layer_norm_composed, normalize, rms_norm
from .padding import pad
from .reductions import logsumexp

__all__ = [
    "attention_composed",
    "attention_weights",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "celu",
    "cosine_similarity",
    "cross_entropy",
    "cross_entropy_composed",
    "dropout",
    "elu",
    "embedding",
    "gelu",
    "gelu_composed",
    "glu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "huber_loss",
    "kl_div",
    "l1_loss",
    "layer_norm",
    "layer_norm_composed",
    "leaky_relu",
    "linear",
    "linear_composed",
    "log_softmax",
    "logsigmoid",
    "logsumexp",
    "mish",
    "mse_loss",
    "nll_loss",
    "normalize",
    "one_hot",
    "pad",
    "pairwise_distance",
    "relu",
    "relu6",
    "rms_norm",
    "scaled_dot_product_attention",
    "selu",
    "sigmoid",
    "silu",
    "smooth_l1_loss",
    "softmax",
    "softmin",
    "softplus",
    "softsign",
    "tanh",
    "tanhshrink",
    "threshold",
]
