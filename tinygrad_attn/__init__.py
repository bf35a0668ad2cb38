"""tinygrad_attn: a small, exact autograd on NumPy for seeing and stepping through attention.

This file re-exports the public API (shared/API.md) and defines nothing of its own.
"""

# ruff: noqa: I001  (tensor first: it closes the one import cycle, see tensor.py)
from .tensor import (
    Tensor,
    arange,
    concatenate,
    from_numpy,
    get_default_dtype,
    manual_seed,
    ones,
    randn,
    set_default_dtype,
    stack,
    where,
    zeros,
)
from .debug import AnomalyError, detect_anomaly
from .engine import BackwardStep
from .function import Function, enable_grad, is_grad_enabled, no_grad
from .gradcheck import GradcheckError, gradcheck
from . import functional, nn, optim
from .creation import (  # noqa: F401  (PyTorch spellings; ta.tensor: the function, not the module)
    bool,
    cat,
    device,
    double,
    float,
    float16,
    float32,
    float64,
    full,
    full_like,
    half,
    int32,
    int64,
    long,
    multinomial,
    ones_like,
    rand,
    randint,
    randn_like,
    tensor,
    topk,
    tril,
    triu,
    zeros_like,
)

__version__ = "0.1.0"

__all__ = [
    "AnomalyError",
    "functional",
    "nn",
    "optim",
    "BackwardStep",
    "Function",
    "GradcheckError",
    "Tensor",
    "arange",
    "concatenate",
    "detect_anomaly",
    "enable_grad",
    "from_numpy",
    "get_default_dtype",
    "gradcheck",
    "is_grad_enabled",
    "manual_seed",
    "no_grad",
    "ones",
    "randn",
    "set_default_dtype",
    "stack",
    "where",
    "zeros",
]
