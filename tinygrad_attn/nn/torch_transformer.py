"""PyTorch's encoder-decoder layers: `nn.TransformerEncoderLayer`, `nn.TransformerEncoder`,
`nn.TransformerDecoderLayer`, `nn.TransformerDecoder` and `nn.Transformer`, with PyTorch's
arguments and defaults, its parameter names (a PyTorch `state_dict` loads as is), its layouts
(`(S, N, E)` unless `batch_first=True`), its masks (bool True = NOT allowed, float added) and
its initialisation (`nn.Transformer` re-draws every matrix with `xavier_uniform_`).

Each layer is the post-norm block of "Attention Is All You Need" (or pre-norm with
`norm_first=True`) built from `nn.MultiheadAttention` (torch_attention.py), `Linear`,
`LayerNorm` and `Dropout`, so a drawn graph shows every step. PyTorch also has fused
inference kernels for these layers (eval mode, no gradients); they compute the same numbers,
so there is one path here. Two differences are visible: PyTorch's `TransformerEncoder` there
(its nested-tensor path) returns zeros at the padded positions of `src_key_padding_mask`,
which is kept; its fused kernels give NaN for a query whose every key is masked, where its
training path gives zeros, and here it is zeros in both modes.

The project's own pre-norm `nn.TransformerBlock` lives in transformer.py. This module must
not hold derivative code: everything here is Tensor ops through the layers it builds on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import functional as F
from ..creation import from_numpy
from ..state import get_default_dtype, is_grad_enabled
from ..tensor import Tensor
from ..tensor_methods import check_device
from . import init
from .activation import GELU, Dropout, ReLU
from .containers import ModuleList
from .linear import Linear
from .module import Module, check_size
from .norm import LayerNorm
from .torch_attention import (
    MultiheadAttention,
    RuntimeValueError,
    canonical_mask,
    check_attn_mask,
    check_padding_mask,
    mask_array,
)


def _activation(activation: str | Callable, label: str) -> Callable:
    """PyTorch's reading of `activation`: "relu" -> F.relu, "gelu" -> F.gelu (the exact erf
    form), a callable as it is."""
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise RuntimeValueError(
            f"{label}: activation should be relu/gelu, not {activation!r}; or pass a callable "
            "such as F.silu"
        )
    if not callable(activation):
        raise TypeError(
            f"{label}: activation must be 'relu', 'gelu' or a callable, got "
            f"{type(activation).__name__}"
        )
    return activation


def _made_as(module: Module, device: Any, dtype: Any) -> Module:
    """`module` on `device` (the CPU only) with its parameters in `dtype` (None: the default
    dtype they were made in): PyTorch's `device=` and `dtype=` constructor arguments."""
    check_device(device)
    if dtype is not None:
        module.to(dtype=dtype)
    return module


def _attend(
    attn: MultiheadAttention, x: Tensor, source: Tensor, mask: Any, padding: Any, causal: bool
) -> Tensor:
    """`attn` from `x` to `source` as PyTorch's layers call it: without the weights (so the
    fused attention, where a query with every key masked gets zeros), the output only."""
    masks = {"attn_mask": mask, "key_padding_mask": padding, "is_causal": causal}
    return attn(x, source, source, need_weights=False, **masks)[0]


def _check_sequence(label: str, name: str, x: Any, d_model: int) -> None:
    """A TypeError/ValueError naming the layer unless `x` is a 2-D `(S, E)` or 3-D Tensor
    whose last axis is `d_model`."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{label}: {name} must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3) or x.shape[-1] != d_model:
        raise ValueError(
            f"{label}: expected {name} of shape (S, N, d_model), (N, S, d_model) with "
            f"batch_first=True, or (S, d_model) for one sequence, with d_model={d_model}; got "
            f"shape {x.shape}"
        )


def _layout(x: Tensor, batch_first: bool) -> tuple[int, int]:
    """(batch, sequence length) of a checked input; batch 0 for an unbatched `(S, E)` one."""
    if x.ndim == 2:
        return 0, x.shape[0]
    return (x.shape[0], x.shape[1]) if batch_first else (x.shape[1], x.shape[0])


def _same_batch(label: str, names: tuple, xs: tuple, batch_first: bool) -> None:
    """A RuntimeValueError (PyTorch raises RuntimeError) unless both inputs are batched alike."""
    (a, b), (x, y) = names, xs
    if x.ndim != y.ndim or _layout(x, batch_first)[0] != _layout(y, batch_first)[0]:
        axis = 0 if batch_first else 1
        raise RuntimeValueError(
            f"{label}: the batch number of {a} and {b} must be equal (axis {axis} with "
            f"batch_first={batch_first}; both 3-D or both 2-D), got {a} {x.shape} and "
            f"{b} {y.shape}"
        )


def _is_causal_mask(mask: Any, size: int) -> bool:
    """Whether `mask` is exactly the `(size, size)` causal mask, float (-inf above the
    diagonal, 0 elsewhere) or bool (True above the diagonal): PyTorch's detection when
    `is_causal` is None."""
    array = mask_array(mask)
    if array.shape != (size, size):
        return False
    above = np.triu(np.ones((size, size), dtype=bool), 1)
    if array.dtype == np.bool_:
        return bool((array == above).all())
    return bool((np.isneginf(array) == above).all() and (array[~above] == 0).all())


class TransformerEncoderLayer(Module):
    """PyTorch's `nn.TransformerEncoderLayer`: self-attention then a feed-forward network
    (`linear2(dropout(activation(linear1(x))))`), each added back to `x` and followed by a
    LayerNorm (`norm1`, `norm2`), or preceded by it with `norm_first=True`.

    `forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False)`: `src` is
    `(S, N, E)`, `(N, S, E)` with `batch_first=True`, or `(S, E)`; `src_mask` `(S, S)` or
    `(N*nhead, S, S)`; `src_key_padding_mask` `(N, S)`. A bool mask is True where attention is
    NOT allowed; a float mask is added to the scores."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_size(self, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        activation = _activation(activation, type(self).__name__)
        # PyTorch's record of which activation its fused kernel would run (1 relu, 2 gelu).
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation
        _made_as(self, device, dtype)

    def forward(
        self,
        src: Tensor,
        src_mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool = False,
    ) -> Tensor:
        label, attn = self._label(), self.self_attn
        _check_sequence(label, "src", src, attn.embed_dim)
        batch, length = _layout(src, attn.batch_first)
        why = f"src {src.shape} (batch_first={attn.batch_first}, nhead={attn.num_heads})"
        check_attn_mask(label, "src_mask", src_mask, batch, attn.num_heads, length, length, why)
        check_padding_mask(label, "src_key_padding_mask", src_key_padding_mask, batch, length, why)
        src_key_padding_mask = canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype, src_mask, "src_mask"
        )
        src_mask = canonical_mask(src_mask, "src_mask", src.dtype)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x  # (like src)

    def _sa_block(self, x: Tensor, mask: Any, padding: Any, is_causal: bool) -> Tensor:
        return self.dropout1(_attend(self.self_attn, x, x, mask, padding, is_causal))

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    """PyTorch's `nn.TransformerDecoderLayer`: self-attention over `tgt` (`norm1`),
    attention from `tgt` to `memory` (`multihead_attn`, `norm2`), then the feed-forward network
    (`norm3`); post-norm, or pre-norm with `norm_first=True`.

    `forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False)`: `tgt`
    `(T, N, E)`, `memory` `(S, N, E)` (batch first with `batch_first=True`); `tgt_mask`
    `(T, T)`, `memory_mask` `(T, S)` (or per head `(N*nhead, ...)`); padding masks `(N, T)`
    and `(N, S)`. Masks as in `TransformerEncoderLayer`."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        check_size(self, d_model=d_model, nhead=nhead, dim_feedforward=dim_feedforward)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, batch_first=batch_first, bias=bias
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation, type(self).__name__)
        _made_as(self, device, dtype)

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        _check_decoder_inputs(
            self._label(),
            self.self_attn,
            tgt,
            memory,
            {
                "tgt_mask": tgt_mask,
                "memory_mask": memory_mask,
                "tgt_key_padding_mask": tgt_key_padding_mask,
                "memory_key_padding_mask": memory_key_padding_mask,
            },
        )
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal
            )
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(
                x
                + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            )
            x = self.norm3(x + self._ff_block(x))
        return x  # (like tgt)

    def _sa_block(self, x: Tensor, mask: Any, padding: Any, is_causal: bool) -> Tensor:
        return self.dropout1(_attend(self.self_attn, x, x, mask, padding, is_causal))

    def _mha_block(
        self, x: Tensor, memory: Tensor, mask: Any, padding: Any, is_causal: bool
    ) -> Tensor:
        return self.dropout2(_attend(self.multihead_attn, x, memory, mask, padding, is_causal))

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _check_decoder_inputs(
    label: str, attn: MultiheadAttention, tgt: Any, memory: Any, masks: dict
) -> None:
    """The decoder's inputs and masks against the shapes its first attention layer expects,
    each error naming `label` and the argument as the caller passed it."""
    _check_sequence(label, "tgt", tgt, attn.embed_dim)
    _check_sequence(label, "memory", memory, attn.embed_dim)
    _same_batch(label, ("tgt", "memory"), (tgt, memory), attn.batch_first)
    batch, length = _layout(tgt, attn.batch_first)
    source = _layout(memory, attn.batch_first)[1]
    why = (
        f"tgt {tgt.shape} and memory {memory.shape} (batch_first={attn.batch_first}, "
        f"nhead={attn.num_heads})"
    )
    heads = attn.num_heads
    check_attn_mask(label, "tgt_mask", masks["tgt_mask"], batch, heads, length, length, why)
    check_attn_mask(label, "memory_mask", masks["memory_mask"], batch, heads, length, source, why)
    check_padding_mask(
        label, "tgt_key_padding_mask", masks["tgt_key_padding_mask"], batch, length, why
    )
    check_padding_mask(
        label, "memory_key_padding_mask", masks["memory_key_padding_mask"], batch, source, why
    )


def _clones(layer: Module, num_layers: int, label: str) -> ModuleList:
    """`num_layers` deep copies of `layer` (independent parameters that start equal), as
    PyTorch's encoder and decoder make them; `layer` itself is not used."""
    if not isinstance(layer, Module):
        raise TypeError(f"{label}: expected a layer Module, got {type(layer).__name__}")
    if not isinstance(num_layers, (int, np.integer)) or isinstance(num_layers, bool):
        raise TypeError(f"{label}: num_layers must be an int, got {type(num_layers).__name__}")
    if num_layers < 0:
        raise ValueError(f"{label}: num_layers must be >= 0, got {num_layers}")
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


def _first_layer(stack: Module) -> Module:
    """The first layer of an encoder or decoder; an IndexError (as PyTorch's) if it has none."""
    if not len(stack.layers):
        raise IndexError(
            f"{stack._label()}: no layers to run (it was made with num_layers=0); give it at "
            "least one"
        )
    return stack.layers[0]


class TransformerEncoder(Module):
    """PyTorch's `nn.TransformerEncoder(encoder_layer, num_layers, norm=None,
    enable_nested_tensor=True, mask_check=True)`: `num_layers` deep copies of `encoder_layer`
    (`layers.0`, `layers.1`, ...) applied in turn, then `norm` if given.

    `forward(src, mask=None, src_key_padding_mask=None, is_causal=None)`; `is_causal=None`
    detects whether `mask` is the causal mask. PyTorch's nested-tensor path is not a separate
    computation here, but its visible effect is kept: in eval mode, with no gradient to record,
    a batch-first encoder of `TransformerEncoderLayer`s given only a `src_key_padding_mask`
    returns zeros at the padded positions (before `norm`), as PyTorch does (`use_nested_tensor`
    says whether the layers qualify)."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers, type(self).__name__)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor and _nested_capable(encoder_layer)
        self.mask_check = mask_check

    def forward(
        self,
        src: Tensor,
        mask: Any = None,
        src_key_padding_mask: Any = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        attn = getattr(_first_layer(self), "self_attn", None)
        batch_first = bool(getattr(attn, "batch_first", False))
        if isinstance(attn, MultiheadAttention):
            label = self._label()
            _check_sequence(label, "src", src, attn.embed_dim)
            batch, length = _layout(src, batch_first)
            why = f"src {src.shape} (batch_first={batch_first}, nhead={attn.num_heads})"
            check_attn_mask(label, "mask", mask, batch, attn.num_heads, length, length, why)
            check_padding_mask(
                label, "src_key_padding_mask", src_key_padding_mask, batch, length, why
            )
        src_key_padding_mask = canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", src.dtype, mask, "mask"
        )
        mask = canonical_mask(mask, "mask", src.dtype)
        padded = self._nested_padding(src, mask, src_key_padding_mask)  # (N, S) or None
        if padded is not None:
            src_key_padding_mask = canonical_mask(padded, "src_key_padding_mask", src.dtype)
        length = src.shape[1 if batch_first and src.ndim == 3 else 0]
        if is_causal is None:
            is_causal = mask is not None and _is_causal_mask(mask, length)
        output = src
        for layer in self.layers:
            output = layer(
                output,
                src_mask=mask,
                is_causal=is_causal,
                src_key_padding_mask=src_key_padding_mask,
            )
        if padded is not None:
            output = output.masked_fill(padded[:, :, None], 0.0)  # (N, S, E)
        if self.norm is not None:
            output = self.norm(output)
        return output

    def _nested_padding(self, src: Tensor, mask: Any, padding: Tensor | None) -> Any:
        """The positions PyTorch's nested-tensor path leaves out and returns as zeros, `(N, S)`
        bool, or None when PyTorch would not take that path. A sequence keeps its first
        `count of unpadded keys` positions (`mask_check=True` makes sure they are the unpadded
        ones; with `mask_check=False` PyTorch trusts it without looking, and so do we)."""
        first = self.layers[0]
        if (
            not self.use_nested_tensor
            or first.training
            or src.ndim != 3
            or padding is None
            or mask is not None
        ):
            return None
        kept = mask_array(padding) == 0  # (N, S): True where a key is not padding
        if self.mask_check and not (kept[:, :-1] >= kept[:, 1:]).all():
            return None  # padding that is not all at the end: PyTorch checks and declines
        tensors = [src] + [p for _, p in first.named_parameters()]
        if is_grad_enabled() and any(t.requires_grad for t in tensors):
            return None  # a graph to record: PyTorch runs the layers as they are
        lengths = kept.sum(axis=1)  # (N,)
        return np.arange(src.shape[1])[None, :] >= lengths[:, None]  # (N, S)


def _nested_capable(layer: Module) -> bool:
    """Whether PyTorch's encoder would use nested tensors for copies of `layer`: one of its
    post-norm, batch-first, biased TransformerEncoderLayers with relu or gelu, equal norm
    eps and an even number of heads."""
    return (
        isinstance(layer, TransformerEncoderLayer)
        and not layer.norm_first
        and layer.self_attn.batch_first
        and layer.self_attn.in_proj_bias is not None
        and bool(layer.activation_relu_or_gelu)
        and layer.norm1.eps == layer.norm2.eps
        and layer.self_attn.num_heads % 2 == 0
    )


class TransformerDecoder(Module):
    """PyTorch's `nn.TransformerDecoder(decoder_layer, num_layers, norm=None)`: `num_layers`
    deep copies of `decoder_layer` applied in turn to `tgt` (each attending to the same
    `memory`), then `norm` if given. `forward(tgt, memory, tgt_mask=None, memory_mask=None,
    tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_is_causal=None,
    memory_is_causal=False)`; `tgt_is_causal=None` detects whether `tgt_mask` is causal."""

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers, type(self).__name__)
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        attn = getattr(_first_layer(self), "self_attn", None)
        batch_first = bool(getattr(attn, "batch_first", False))
        if isinstance(attn, MultiheadAttention):
            masks = {
                "tgt_mask": tgt_mask,
                "memory_mask": memory_mask,
                "tgt_key_padding_mask": tgt_key_padding_mask,
                "memory_key_padding_mask": memory_key_padding_mask,
            }
            _check_decoder_inputs(self._label(), attn, tgt, memory, masks)
        length = tgt.shape[1 if batch_first and tgt.ndim == 3 else 0]
        if tgt_is_causal is None:
            tgt_is_causal = tgt_mask is not None and _is_causal_mask(tgt_mask, length)
        output = tgt
        for layer in self.layers:
            output = layer(
                output,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=tgt_is_causal,
                memory_is_causal=memory_is_causal,
            )
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    """PyTorch's `nn.Transformer`: a `TransformerEncoder` of `num_encoder_layers` layers and a
    `TransformerDecoder` of `num_decoder_layers`, each ending in a LayerNorm
    (`encoder.norm`, `decoder.norm`) unless `custom_encoder` / `custom_decoder` replace them.
    Every parameter with more than one axis is then re-drawn with `nn.init.xavier_uniform_`,
    as PyTorch's `_reset_parameters`.

    `forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False)` -> the decoder's output,
    shaped like `tgt`. `Transformer.generate_square_subsequent_mask(sz)` is the causal mask
    for `tgt_mask`."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Any | None = None,
        custom_decoder: Any | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps)
        layer_args += (batch_first, norm_first, bias, device, dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            encoder_layer = TransformerEncoderLayer(*layer_args)
            encoder_norm = _made_as(
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias), device, dtype
            )
            self.encoder = TransformerEncoder(encoder_layer, num_encoder_layers, encoder_norm)
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            decoder_layer = TransformerDecoderLayer(*layer_args)
            decoder_norm = _made_as(
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias), device, dtype
            )
            self.decoder = TransformerDecoder(decoder_layer, num_decoder_layers, decoder_norm)
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Any = None,
        tgt_mask: Any = None,
        memory_mask: Any = None,
        src_key_padding_mask: Any = None,
        tgt_key_padding_mask: Any = None,
        memory_key_padding_mask: Any = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        label = self._label()
        for name, x in (("src", src), ("tgt", tgt)):
            if not isinstance(x, Tensor):
                raise TypeError(f"{label}: {name} must be a Tensor, got {type(x).__name__}")
        _same_batch(label, ("src", "tgt"), (src, tgt), self.batch_first)
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeValueError(
                f"{label}: the feature number of src and tgt must be equal to "
                f"d_model={self.d_model} (last axis), got src {src.shape} and tgt {tgt.shape}"
            )
        memory = self.encoder(
            src,
            mask=src_mask,
            src_key_padding_mask=src_key_padding_mask,
            is_causal=src_is_causal,
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The `(sz, sz)` causal mask: -inf above the diagonal (a later position, not
        allowed) and 0 on and below it, in `dtype` (the default float dtype if None)."""
        check_device(device)
        if not isinstance(sz, (int, np.integer)) or isinstance(sz, bool) or sz < 0:
            raise ValueError(
                f"Transformer.generate_square_subsequent_mask: sz must be an int >= 0, got {sz!r}"
            )
        dtype = get_default_dtype() if dtype is None else np.dtype(dtype)
        above = np.triu(np.ones((sz, sz), dtype=bool), 1)  # (sz, sz)
        return from_numpy(np.where(above, -np.inf, 0.0).astype(dtype))

    def _reset_parameters(self) -> None:
        """xavier_uniform_ on every parameter with more than one axis, as PyTorch."""
        for param in self.parameters():
            if param.ndim > 1:
                init.xavier_uniform_(param)
