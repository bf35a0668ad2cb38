"""`nn.MultiheadAttention`: PyTorch's layer of that name, with its parameters
(`in_proj_weight`, `in_proj_bias`, `out_proj`), so a PyTorch `state_dict` loads into it; its
layout (`(L, N, E)` unless `batch_first=True`); its masks (a bool mask is True where attention
is NOT allowed, the opposite of `F.scaled_dot_product_attention`'s); and its return value
`(output, weights)`, the weights averaged over the heads unless `average_attn_weights=False`.

Also the mask reading PyTorch's attention layers share (`canonical_mask`, the shape checks),
which the layers of torch_transformer.py use too. With `need_weights=True` the attention is
written with Tensor ops (linear, matmul, softmax), so a drawn graph shows every step; with
`need_weights=False` it is one `F.scaled_dot_product_attention` node, as in PyTorch, where a
query whose every key is masked gets zeros (with the weights it gets NaN, as in PyTorch).
This project's own `nn.MultiHeadAttention` (attention.py) is the leaner layer for new code.
This module must not hold derivative code: everything here is Tensor ops.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from .. import functional as F
from ..creation import from_numpy
from ..state import get_default_dtype
from ..tensor import Tensor
from . import init
from .linear import Linear
from .module import Module, check_size
from .parameter import Parameter


class RuntimeValueError(ValueError, RuntimeError):
    """A wrong shape or value where PyTorch raises RuntimeError: a ValueError (this project's
    class for those) that `except RuntimeError` in code written for PyTorch also catches."""


def mask_array(mask: Any) -> np.ndarray:
    """The ndarray of a mask given as a Tensor, an ndarray or nested lists (no copy for the
    first two)."""
    return mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask)


def check_mask_dtype(label: str, name: str, mask: Any) -> None:
    """A TypeError naming `label` and `name` unless `mask` holds bools or floats."""
    kind = mask_array(mask).dtype.kind
    if kind not in "bf":
        raise TypeError(
            f"{label}: {name} must be a bool mask (True = not allowed) or a float mask (added "
            f"to the scores), got dtype {mask_array(mask).dtype}; convert it with .bool() or "
            ".float()"
        )


def check_attn_mask(
    label: str, name: str, mask: Any, batch: int, heads: int, length: int, source: int, why: str
) -> None:
    """Raise, naming `label`, `name` and `why` (the inputs' shapes), unless `mask` is None or
    an attention mask PyTorch accepts: `(L, S)`, or `(N*num_heads, L, S)` (`(num_heads, L, S)`
    for an unbatched input, where `batch` is 0)."""
    if mask is None:
        return
    check_mask_dtype(label, name, mask)
    shape = mask_array(mask).shape
    per_head = (max(batch, 1) * heads, length, source)
    if shape in ((length, source), per_head):
        return
    heads_text = "num_heads" if batch == 0 else "N*num_heads"
    raise RuntimeValueError(
        f"{label}: {name} of shape {shape} does not fit {why}: expected (L, S) = "
        f"{(length, source)} or ({heads_text}, L, S) = {per_head}"
    )


def check_padding_mask(label: str, name: str, mask: Any, batch: int, source: int, why: str) -> None:
    """Raise, naming `label`, `name` and `why`, unless `mask` is None or a key padding mask of
    shape `(N, S)` (`(S,)` for an unbatched input, where `batch` is 0), True = a padded key."""
    if mask is None:
        return
    check_mask_dtype(label, name, mask)
    shape = mask_array(mask).shape
    expected = (batch, source) if batch else (source,)
    if shape != expected:
        raise RuntimeValueError(
            f"{label}: {name} of shape {shape} does not fit {why}: expected "
            f"{'(N, S)' if batch else '(S,)'} = {expected}, True where a key is padding"
        )


def canonical_mask(
    mask: Any, name: str, dtype: np.dtype, other: Any = None, other_name: str = ""
) -> Tensor | None:
    """A mask as PyTorch's attention layers read it: None stays None; a bool mask becomes a
    float mask of `dtype`, -inf where True (not allowed) and 0 elsewhere; a float mask is
    returned as a Tensor (the same one if it was a Tensor, so a gradient reaches it). Warns,
    as PyTorch does, when `other` (the mask given with it) has another dtype."""
    if mask is None:
        return None
    array = mask_array(mask)
    if other is not None and mask_array(other).dtype != array.dtype:
        warnings.warn(
            f"Support for mismatched {name} and {other_name} is deprecated. Use same type for "
            "both instead.",
            UserWarning,
            stacklevel=4,
        )
    if array.dtype == np.bool_:
        return from_numpy(np.where(array, -np.inf, 0.0).astype(dtype))  # (same shape)
    return mask if isinstance(mask, Tensor) else from_numpy(array)


class MultiheadAttention(Module):
    """PyTorch's `nn.MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True,
    batch_first=False)`: `forward(query, key, value, key_padding_mask=None, need_weights=True,
    attn_mask=None, average_attn_weights=True, is_causal=False)` -> `(output, weights)`.

    `is_causal=True` is PyTorch's hint that `attn_mask` is the causal mask: with
    `need_weights=False` and no `key_padding_mask` the causal mask is used in its place, as
    PyTorch does. Without an `attn_mask` (an error in PyTorch) the causal mask is used."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
    ) -> None:
        super().__init__()
        check_size(self, embed_dim=embed_dim, num_heads=num_heads)
        if embed_dim % num_heads:
            raise ValueError(
                f"MultiheadAttention: embed_dim={embed_dim} must be divisible by "
                f"num_heads={num_heads}"
            )
        if (
            add_bias_kv
            or add_zero_attn
            or kdim not in (None, embed_dim)
            or vdim
            not in (
                None,
                embed_dim,
            )
        ):
            raise ValueError(
                "MultiheadAttention: add_bias_kv, add_zero_attn and a kdim/vdim other than "
                "embed_dim are not supported here"
            )
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.head_dim, self.batch_first = embed_dim // num_heads, batch_first
        dtype = get_default_dtype()
        self.in_proj_weight = Parameter(from_numpy(np.zeros((3 * embed_dim, embed_dim), dtype)))
        init.xavier_uniform_(self.in_proj_weight)  # (3E, E): the query, key, value rows
        self.in_proj_bias = Parameter(from_numpy(np.zeros(3 * embed_dim, dtype))) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias)
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple:
        self._check_inputs(query, key, value)
        unbatched = query.ndim == 2
        batch = 0 if unbatched else query.shape[0 if self.batch_first else 1]
        axis = 1 if self.batch_first and not unbatched else 0  # the sequence axis
        length, source = query.shape[axis], key.shape[axis]
        why = f"query {query.shape} and key {key.shape}" + self._layout()
        label = self._label()
        check_attn_mask(label, "attn_mask", attn_mask, batch, self.num_heads, length, source, why)
        check_padding_mask(label, "key_padding_mask", key_padding_mask, batch, source, why)
        if unbatched:  # (L, E): one sequence
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if not self.batch_first or unbatched:  # (L, N, E) -> (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        padding = canonical_mask(
            key_padding_mask, "key_padding_mask", query.dtype, attn_mask, "attn_mask"
        )
        # PyTorch's hint: the fused attention applies the causal mask itself.
        causal_hint = bool(is_causal) and padding is None and not need_weights
        if causal_hint:
            attn_mask = None
        elif is_causal and attn_mask is None:
            attn_mask = np.triu(np.ones((length, source), dtype=bool), 1)  # (L, S)
        attn_mask = canonical_mask(attn_mask, "attn_mask", query.dtype)
        e, h, d = self.embed_dim, self.num_heads, self.head_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        projected = [
            F.linear(t, w[i * e : (i + 1) * e], None if b is None else b[i * e : (i + 1) * e])
            for i, t in enumerate((query, key, value))
        ]  # each (N, L or S, E)
        q, k, v = (t.reshape(*t.shape[:2], h, d).transpose(1, 2) for t in projected)  # (N,H,T,D)
        mask = _merged(attn_mask, padding, q.shape[0], h, length, source)  # (N|1, H|1, L, S)
        dropout = self.dropout if self.training else 0.0
        if need_weights:
            scores = (q @ k.transpose(-2, -1)) * (1 / math.sqrt(d))  # (N, H, L, S)
            if mask is not None:
                scores = scores + mask
            weights = scores.softmax(-1)  # (N, H, L, S)
            if dropout:
                weights = F.dropout(weights, dropout)
            out = weights @ v  # (N, H, L, D)
        else:
            out = F.scaled_dot_product_attention(q, k, v, mask, dropout, causal_hint)
        out = out.transpose(1, 2).reshape(q.shape[0], -1, e)  # (N, L, E)
        out = self.out_proj(out)
        if not self.batch_first or unbatched:
            out = out.transpose(0, 1)  # (L, N, E)
        if unbatched:
            out = out.squeeze(1)  # (L, E)
        if not need_weights:
            return out, None
        if unbatched:
            weights = weights.squeeze(0)  # (H, L, S)
        return out, weights.mean(dim=-3) if average_attn_weights else weights

    def _layout(self) -> str:
        return ", batch_first=True" if self.batch_first else ", batch_first=False"

    def _check_inputs(self, query: Any, key: Any, value: Any) -> None:
        """Errors naming this layer for inputs PyTorch refuses: not Tensors, not all 2-D or all
        3-D, a width other than embed_dim, key and value of different shapes, another batch."""
        label, named = self._label(), (("query", query), ("key", key), ("value", value))
        for name, t in named:
            if not isinstance(t, Tensor):
                raise TypeError(f"{label}: {name} must be a Tensor, got {type(t).__name__}")
        shapes = ", ".join(f"{name} {t.shape}" for name, t in named)
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ValueError(
                f"{label}: query, key and value must all be 3-D (batched) or all 2-D (one "
                f"sequence), got {shapes}"
            )
        if query.shape[-1] != self.embed_dim:
            raise ValueError(
                f"{label}: expected query of width embed_dim={self.embed_dim} (last axis), got "
                f"{shapes}"
            )
        if key.shape != value.shape:
            raise ValueError(f"{label}: key and value must have the same shape, got {shapes}")
        if key.shape[-1] != self.embed_dim:
            raise ValueError(
                f"{label}: expected key and value of width embed_dim={self.embed_dim} (kdim and "
                f"vdim are not supported), got {shapes}"
            )
        axis = 0 if self.batch_first else 1
        if query.ndim == 3 and key.shape[axis] != query.shape[axis]:
            raise ValueError(
                f"{label}: query and key have different batch sizes (axis {axis}, "
                f"batch_first={self.batch_first}): {shapes}"
            )

    def extra_repr(self) -> str:
        heads = f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
        return heads + (", batch_first=True" if self.batch_first else "")


def _merged(
    attn_mask: Tensor | None,
    padding: Tensor | None,
    batch: int,
    heads: int,
    length: int,
    source: int,
) -> Tensor | None:
    """The float attention mask and the float key padding mask as one mask that broadcasts
    against the (N, H, L, S) scores, or None without either."""
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.reshape(1, 1, length, source)  # (1, 1, L, S)
        else:
            attn_mask = attn_mask.reshape(batch, heads, length, source)  # (N, H, L, S)
    if padding is not None:
        padding = padding.reshape(batch, 1, 1, source)  # (N, 1, 1, S)
    if attn_mask is None:
        return padding
    return attn_mask if padding is None else attn_mask + padding
