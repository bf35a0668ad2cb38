"""`dropout`: zero elements at random while training, scaling the rest. No backward code here:
the mask is a constant multiplied in."""

from __future__ import annotations

import numpy as np

from ..errors import DTypeError
from ..state import get_rng
from ..tensor import Tensor
from ._checks import _tensor


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p), so the expected
    value is unchanged; the identity when `training` is False or p == 0, zeros when p == 1.
    The mask comes from the global generator (`ta.manual_seed`). `inplace=True` multiplies
    `input` by the mask in place and returns it, as PyTorch."""
    input = _tensor(input, "dropout")
    if input.dtype.kind != "f":
        raise DTypeError(
            f"dropout: needs a float tensor, got dtype {input.dtype} (scaling by 1/(1-p) needs "
            "fractions); convert it first (x.float())"
        )
    if not isinstance(p, (int, float, np.integer, np.floating)) or isinstance(p, bool):
        raise TypeError(f"dropout: p must be a number in [0, 1], got {type(p).__name__}")
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return input
    if p == 1:  # everything dropped (as PyTorch: x * 0, so inf gives nan)
        mask = np.zeros((), dtype=input.dtype)
    else:
        keep = get_rng().random(input.shape) >= p  # (input.shape), True = kept
        mask = keep.astype(input.dtype) / input.dtype.type(1 - p)
    return input.mul_(mask) if inplace else input * mask
