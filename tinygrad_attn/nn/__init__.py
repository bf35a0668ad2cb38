"""Neural-network layers: `Module` and the layers built on it.

Each layer names its parameters by their path from the outermost module as soon as it is
assigned (`blocks.0.attn.q_proj.weight`), so graphs and error messages say which is which.
"""

from .activation import GELU, Dropout, ReLU
from .attention import MultiHeadAttention, SelfAttention
from .embedding import Embedding
from .linear import Linear
from .module import IncompatibleKeys, Module, ModuleList, Sequential, functional_call
from .norm import LayerNorm
from .transformer import TransformerBlock

__all__ = [
    "GELU",
    "Dropout",
    "Embedding",
    "IncompatibleKeys",
    "LayerNorm",
    "Linear",
    "Module",
    "ModuleList",
    "MultiHeadAttention",
    "ReLU",
    "SelfAttention",
    "Sequential",
    "TransformerBlock",
    "functional_call",
]
