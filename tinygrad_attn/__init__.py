"""tinygrad_attn: a small, exact autograd on NumPy for seeing and stepping through attention.

This file re-exports the public API (shared/API.md) and defines nothing of its own; the order of
its imports does not matter. Its one side effect is the excepthook line at the end.
"""

import os as _os

from . import functional, nn, optim, saved, serialization
from .creation import (  # noqa: F401  (PyTorch spellings; ta.tensor: the function, not the module)
    arange,
    bool,
    cat,
    concatenate,
    device,
    double,
    float,
    float16,
    float32,
    float64,
    from_numpy,
    full,
    full_like,
    half,
    int32,
    int64,
    long,
    multinomial,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    randn_like,
    stack,
    tensor,
    topk,
    tril,
    triu,
    where,
    zeros,
    zeros_like,
)
from .debug import AnomalyError, detect_anomaly
from .engine import BackwardStep
from .function import Function
from .gradcheck import GradcheckError, gradcheck
from .saved import explain_read_only
from .serialization import load, save
from .state import (
    enable_grad,
    get_default_dtype,
    is_grad_enabled,
    manual_seed,
    no_grad,
    set_default_dtype,
)
from .tensor import Tensor
from .torch_functions import (  # noqa: F401  (torch.exp, torch.matmul, ... : PyTorch code carries over)
    abs,
    addmm,
    allclose,
    amax,
    amin,
    argmax,
    argmin,
    argsort,
    bmm,
    chunk,
    clamp,
    clone,
    cos,
    cumsum,
    einsum,
    empty,
    equal,
    erf,
    exp,
    eye,
    flatten,
    flip,
    gather,
    is_tensor,
    isfinite,
    isinf,
    isnan,
    linspace,
    log,
    log_softmax,
    logsumexp,
    masked_fill,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mm,
    norm,
    normal,
    numel,
    outer,
    permute,
    pow,
    prod,
    randperm,
    relu,
    reshape,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softmax,
    sort,
    split,
    sqrt,
    square,
    squeeze,
    std,
    sum,
    tanh,
    transpose,
    unsqueeze,
    var,
)

__version__ = "0.1.0"

__all__ = [
    "AnomalyError",
    "BackwardStep",
    "Function",
    "GradcheckError",
    "Tensor",
    "arange",
    "concatenate",
    "detect_anomaly",
    "enable_grad",
    "explain_read_only",
    "from_numpy",
    "functional",
    "get_default_dtype",
    "gradcheck",
    "is_grad_enabled",
    "load",
    "manual_seed",
    "nn",
    "no_grad",
    "ones",
    "optim",
    "randn",
    "save",
    "serialization",
    "set_default_dtype",
    "stack",
    "where",
    "zeros",
]

# The one import side effect: a chained sys.excepthook that adds, to an uncaught "assignment
# destination is read-only" error, which op saved the array for backward (saved.py). Turn it
# off with TINYGRAD_ATTN_EXCEPTHOOK=0 or ta.saved.uninstall_excepthook().
if _os.environ.get("TINYGRAD_ATTN_EXCEPTHOOK", "1") != "0":
    saved.install_excepthook()
