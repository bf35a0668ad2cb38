"""`pad`: constant padding (or cropping) of the last axes, as PyTorch's `F.pad`. No backward
code here: slicing and concatenation."""

from __future__ import annotations

from typing import Any

from ..creation import cat, full
from ..tensor import Tensor
from ._checks import _tensor


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float = 0.0) -> Tensor:
    """Pad (or, with negative amounts, crop) the last axes by `value`: `pad` is (before, after)
    for the last axis, then for the one before it, and so on, as in PyTorch."""
    input = _tensor(input, "pad")
    amounts = tuple(int(n) for n in pad)
    if len(amounts) % 2 or len(amounts) // 2 > input.ndim:
        raise ValueError(
            f"pad: {pad} must hold a (before, after) pair per padded axis, at most "
            f"{input.ndim} pairs for shape {input.shape}"
        )
    if mode != "constant":
        raise ValueError(f"pad: only mode='constant' is supported, got mode={mode!r}")
    out = input
    for i in range(len(amounts) // 2):
        axis = input.ndim - 1 - i
        before, after = amounts[2 * i], amounts[2 * i + 1]
        length = out.shape[axis]
        out = out[(slice(None),) * axis + (slice(max(-before, 0), length - max(-after, 0)),)]
        parts = [out]
        for side, n in ((0, before), (1, after)):
            if n > 0:
                shape = out.shape[:axis] + (n,) + out.shape[axis + 1 :]
                parts.insert(side * len(parts), full(shape, value, dtype=out.dtype))
        out = cat(parts, dim=axis) if len(parts) > 1 else out
    return out
