"""Neural-network layers: `Module` and the layers built on it.

Each layer names its parameters by their path from the outermost module as soon as it is
assigned (`blocks.0.attn.q_proj.weight`), so graphs and error messages say which is which.
"""

from .. import functional  # `from torch.nn import functional as F` carries over
from . import init, utils
from .activation import GELU, Dropout, ReLU
from .attention import MultiHeadAttention, SelfAttention
from .embedding import Embedding
from .linear import Linear
from .module import (
    IncompatibleKeys,
    Module,
    ModuleDict,
    ModuleList,
    Parameter,
    Sequential,
    functional_call,
)
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
    "ModuleDict",
    "ModuleList",
    "Parameter",
    "MultiHeadAttention",
    "ReLU",
    "SelfAttention",
    "Sequential",
    "TransformerBlock",
    "functional",
    "functional_call",
    "init",
    "utils",
]
