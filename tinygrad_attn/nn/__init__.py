"""Neural-network layers: `Module` and the layers built on it.

Each layer names its parameters by their path from the outermost module as soon as it is
assigned (`blocks.0.attn.q_proj.weight`), so graphs and error messages say which is which.
"""

from . import (
    functional,  # `import torch.nn.functional as F` carries over (issue 27)
    init,
    parallel,  # noqa: F401  (`from torch.nn.parallel import DistributedDataParallel`)
    utils,
)
from .activation import GELU, Dropout, ReLU
from .attention import MultiHeadAttention, SelfAttention
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .embedding import Embedding
from .linear import Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import IncompatibleKeys, Module, functional_call
from .norm import LayerNorm, RMSNorm
from .parallel import DataParallel
from .parameter import Buffer, Parameter
from .pointwise import (
    CELU,
    ELU,
    GLU,
    SELU,
    CosineSimilarity,
    Flatten,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    Identity,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PairwiseDistance,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
    Unflatten,
)
from .torch_attention import MultiheadAttention
from .torch_transformer import (
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)
from .transformer import TransformerBlock

__all__ = [
    "DataParallel",
    "BCELoss",
    "Buffer",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "Flatten",
    "L1Loss",
    "LogSoftmax",
    "MSELoss",
    "NLLLoss",
    "SmoothL1Loss",
    "Dropout",
    "ELU",
    "Embedding",
    "GELU",
    "Hardtanh",
    "Identity",
    "IncompatibleKeys",
    "LayerNorm",
    "LeakyReLU",
    "Linear",
    "Module",
    "ModuleDict",
    "ModuleList",
    "MultiHeadAttention",
    "MultiheadAttention",
    "Parameter",
    "ParameterDict",
    "ParameterList",
    "RMSNorm",
    "ReLU",
    "SelfAttention",
    "Sequential",
    "SiLU",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "Tanh",
    "Transformer",
    "TransformerBlock",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "functional",
    "functional_call",
    "init",
    "utils",
    "CELU",
    "GLU",
    "SELU",
    "CosineSimilarity",
    "Hardsigmoid",
    "Hardswish",
    "LogSigmoid",
    "Mish",
    "PairwiseDistance",
    "ReLU6",
    "Softmin",
    "Softsign",
    "Tanhshrink",
    "Threshold",
    "Unflatten",
    "HuberLoss",
    "KLDivLoss",
]
