"""`dropout`: zero elements at random while training, scaling the rest. No backward code here:
the mask is a constant multiplied in."""

from __future__ import annotations

import numpy as np

from ..state import get_rng
from ..tensor import Tensor
from ._checks import _tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p), so the expected
    value is unchanged; the identity when `training` is False or p == 0, zeros when p == 1.
    The mask comes from the global generator (`ta.manual_seed`)."""
    x = _tensor(x, "dropout")
    if x.dtype.kind != "f":
        raise TypeError(
            f"dropout: needs a float tensor, got dtype {x.dtype} (scaling by 1/(1-p) needs "
            "fractions); convert it first, e.g. Tensor(x._data, dtype=np.float32)"
        )
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"dropout: p must be a number in [0, 1], got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    if p == 1:  # everything dropped (as PyTorch: x * 0, so inf gives nan)
        return x * np.zeros((), dtype=x.dtype)
    keep = get_rng().random(x.shape) >= p  # (x.shape), True = kept
    return x * (keep.astype(x.dtype) / x.dtype.type(1 - p))
