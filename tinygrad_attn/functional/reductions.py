"""`logsumexp` over dims, stable (PyTorch has it as `torch.logsumexp`; kept here too). No
backward code here."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from ._checks import _tensor


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, with the maximum taken out first so that nothing
    overflows; its gradient is softmax(x) over `dim`."""
    input = _tensor(input, "logsumexp")
    peak = input._data.max(axis=dim, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)  # a row of -inf: its sum is 0, its log -inf
    total = (input - peak).exp().sum(dim=dim, keepdim=True).log() + peak
    return total if keepdim else total.squeeze(dim)
