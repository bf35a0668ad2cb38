"""Distances between vectors: `cosine_similarity`, `pairwise_distance`. No backward code
here."""

from __future__ import annotations

from ..tensor import Tensor
from ._checks import _tensor


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """x1 . x2 / (max(||x1||, eps) max(||x2||, eps)) along `dim` (the shapes broadcast)."""
    x1, x2 = _tensor(x1, "cosine_similarity", "x1"), _tensor(x2, "cosine_similarity", "x2")
    size1 = x1.norm(dim=dim).clamp(min=eps)
    size2 = x2.norm(dim=dim).clamp(min=eps)
    return (x1 * x2).sum(dim=dim) / (size1 * size2)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (the shapes broadcast), as PyTorch's."""
    x1, x2 = _tensor(x1, "pairwise_distance", "x1"), _tensor(x2, "pairwise_distance", "x2")
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)
