"""`logsumexp` over dims, stable (PyTorch has it as `torch.logsumexp` and `Tensor.logsumexp`,
which call this). No backward code here."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ShapeError, dim_error
from ..state import get_default_dtype
from ..tensor import Tensor
from ._checks import _tensor


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim` (an int or a tuple of ints), as `torch.logsumexp`: the
    maximum is taken out first so that nothing overflows; over an empty axis it is -inf (the
    log of an empty sum); an integer input gives the default float dtype. Its gradient is
    softmax(x) over `dim`."""
    input = _tensor(input, "logsumexp")
    if input.dtype.kind != "f":
        input = input.to(get_default_dtype())
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        raise ShapeError("logsumexp(): dim=() names no axis; pass the axes to reduce over")
    ndim = input.ndim
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)):
            raise TypeError(f"logsumexp(): dim must be an int or a tuple of ints, got {dim!r}")
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise dim_error("logsumexp", d, ndim)
    axes = tuple(sorted({int(d) % ndim for d in dims})) if ndim else ()
    peak = np.max(input._data, axis=axes, keepdims=True, initial=-np.inf)
    peak = np.where(np.isfinite(peak), peak, 0)  # a row of -inf (or none): its sum is 0
    terms = (input - peak).exp()
    total = terms.sum(dim=axes, keepdim=True) if axes else terms
    with np.errstate(divide="ignore"):  # log(0) = -inf, silently, as PyTorch
        out = total.log() + peak
    return out if keepdim or not axes else out.squeeze(axes)
