"""Embedding: a lookup table from integer token ids to learned vectors."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import functional as F
from ..creation import from_numpy
from ..state import get_default_dtype, get_rng
from ..tensor import Tensor
from .module import Module, check_size
from .parameter import Parameter


class Embedding(Module):
    """`weight[indices]`: integer ids `(...)` -> vectors `(..., embedding_dim)`.

    `weight` is (num_embeddings, embedding_dim), drawn from N(0, 1) as in PyTorch. The lookup is
    integer-array indexing, so a repeated id adds up the gradients of all its positions. As in
    PyTorch, the row of `padding_idx` (if given) starts at zeros and gets no gradient.
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: Any = None) -> None:
        super().__init__()
        check_size(self, num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise ValueError(
                f"Embedding: padding_idx={padding_idx} is not a row of a table of "
                f"num_embeddings={num_embeddings}"
            )
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        table = get_rng().standard_normal((num_embeddings, embedding_dim))
        if self.padding_idx is not None:
            table[self.padding_idx] = 0
        self.weight = Parameter(from_numpy(table.astype(get_default_dtype())))  # (N, D)

    def forward(self, indices: Any) -> Tensor:
        ids = np.asarray(indices._data if isinstance(indices, Tensor) else indices)
        if ids.dtype.kind not in "iu":
            raise TypeError(
                f"{self._label()}: indices must be integers, got dtype {ids.dtype}; pass token "
                "ids, e.g. np.array([[3, 1, 4]])"
            )
        bad = ids[(ids < 0) | (ids >= self.num_embeddings)]
        if bad.size:
            raise ValueError(
                f"{self._label()}: index {int(bad.flat[0])} is out of range for "
                f"num_embeddings={self.num_embeddings} (valid ids: 0 to "
                f"{self.num_embeddings - 1})"
            )
        return F.embedding(ids, self.weight, self.padding_idx)  # (..., D)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"
