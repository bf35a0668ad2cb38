"""Embedding: a lookup table from integer token ids to learned vectors."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..creation import from_numpy
from ..errors import ShapeError
from ..functional.embedding import padding_row
from ..state import get_default_dtype, get_rng, no_grad
from ..tensor import Tensor
from ..tensor_methods import check_device
from .module import Module, check_size
from .parameter import Parameter


class Embedding(Module):
    """`F.embedding(ids, weight)`: integer ids `(...)` -> vectors `(..., embedding_dim)`, as
    PyTorch's `nn.Embedding`.

    `weight` is (num_embeddings, embedding_dim), drawn from N(0, 1) as in PyTorch. The lookup is
    integer-array indexing, so a repeated id adds up the gradients of all its positions. The row
    of `padding_idx` (if given; negative counts from the end) starts at zeros and gets no
    gradient. `max_norm`, `norm_type` and `scale_grad_by_freq` as in `F.embedding`.
    `Embedding.from_pretrained(table)` wraps an existing table.
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_size(self, num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        check_device(device)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_row(padding_idx, num_embeddings, "Embedding")
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            table = get_rng().standard_normal((num_embeddings, embedding_dim))
            table = from_numpy(table.astype(get_default_dtype() if dtype is None else dtype))
            self.weight = Parameter(table, requires_grad=not _freeze)  # (N, D)
            if self.padding_idx is not None:
                with no_grad():
                    self.weight[self.padding_idx].fill_(0)
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ShapeError(
                    f"Embedding: _weight has shape {tuple(_weight.shape)}, expected "
                    f"(num_embeddings, embedding_dim) = ({num_embeddings}, {embedding_dim})"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)  # shares its memory

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose weight is `embeddings` (2-D; the Parameter shares its memory),
        frozen (`requires_grad=False`) unless `freeze=False`, as PyTorch's. The padding row
        keeps its values (it only gets no gradient)."""
        if not isinstance(embeddings, Tensor) or embeddings.ndim != 2:
            shape = embeddings.shape if isinstance(embeddings, Tensor) else type(embeddings)
            raise ShapeError(
                f"Embedding.from_pretrained: embeddings must be a 2-D tensor (num_embeddings, "
                f"embedding_dim), got {shape}"
            )
        rows, cols = embeddings.shape
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )

    def forward(self, indices: Any) -> Tensor:
        return F.embedding(
            indices,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )  # (..., D)

    def extra_repr(self) -> str:
        text = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            text += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            text += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            text += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            text += ", scale_grad_by_freq=True"
        if self.sparse:
            text += ", sparse=True"
        return text
