"""Op-table rows for the ops added for PyTorch's spellings (ops/math_functions.py,
ops/clamping.py, ops/reduce.py, ops/extremes.py, ops/scan.py, ops/shape.py) and for the Tensor
methods built from them or from older ops (`clamp`, `topk`, `split`, `permute`, ...).

Each primitive op has rows named after its class; the composites have rows of their own, so
every new method is gradient-checked by `tests/test_ops.py` and `python -m tinygrad_attn
gradcheck`. Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

import numpy as np

from ... import ops
from ...tensor import Tensor
from ..opspec import (
    AWAY_FROM_ZERO,
    DISTINCT,
    POSITIVE,
    REAL,
    SATURATING,
    Case,
    Choices,
    Domain,
    OpSpec,
    Values,
    fixed,
    register,
)
from .elementwise import binary, np_sigmoid, unary
from .reduce import reduction

# Above -1: the domain of log1p.
ABOVE_MINUS_ONE = Domain("above_minus_one", -0.5, 2.0)


# ------------------------------------------------------------------ elementwise (unary.py)
def _sin(x: Tensor) -> Tensor:
    return x.sin()


def _cos(x: Tensor) -> Tensor:
    return x.cos()


def _log1p(x: Tensor) -> Tensor:
    return x.log1p()


def _expm1(x: Tensor) -> Tensor:
    return x.expm1()


def _clip(x: Tensor) -> Tensor:
    return x.clamp(-1.025, 1.025)  # bounds off DISTINCT's 0.05 grid: no value on a kink


def _np_clip(x: np.ndarray) -> np.ndarray:
    return np.clip(x, -1.025, 1.025)


def _clip_low(x: Tensor) -> Tensor:
    return x.clamp(min=0.025)


def _np_clip_low(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.025)


def _maximum(a: Tensor, b: Tensor) -> Tensor:
    return a.maximum(b)


def _minimum(a: Tensor, b: Tensor) -> Tensor:
    return a.minimum(b)


def _leaky_relu(x: Tensor) -> Tensor:
    return x.leaky_relu(0.1)


def _np_leaky_relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, 0.1 * x)


def _elu(x: Tensor) -> Tensor:
    return x.elu(0.7)


def _np_elu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, 0.7 * (np.exp(np.minimum(x, 0)) - 1))


def _softplus(x: Tensor) -> Tensor:
    return x.softplus(beta=2.0, threshold=20.0)


def _np_softplus(x: np.ndarray) -> np.ndarray:
    return np.where(2 * x > 20, x, np.log(1 + np.exp(np.minimum(2 * x, 20))) / 2)


register(unary("Sin", _sin, np.sin))
register(unary("Cos", _cos, np.cos))
register(unary("Log1p", _log1p, np.log1p, ABOVE_MINUS_ONE))
register(unary("Expm1", _expm1, np.expm1))
register(unary("Clip", _clip, _np_clip, DISTINCT))
register(unary("clamp(min=)", _clip_low, _np_clip_low, DISTINCT))
# DISTINCT values are equal (a tie: half the gradient each, as central differences measure) or
# at least 0.05 apart, never within a finite-difference step of each other.
register(binary("Maximum", _maximum, np.maximum, DISTINCT, DISTINCT))
register(binary("Minimum", _minimum, np.minimum, DISTINCT, DISTINCT))
register(unary("LeakyRelu", _leaky_relu, _np_leaky_relu, AWAY_FROM_ZERO))
register(unary("Elu", _elu, _np_elu, AWAY_FROM_ZERO))
register(unary("Softplus", _softplus, _np_softplus, edges=[(SATURATING, "past the threshold")]))


# Composites: Tensor methods written with older ops.
def _square(x: Tensor) -> Tensor:
    return x.square()


def _reciprocal(x: Tensor) -> Tensor:
    return x.reciprocal()


def _log2(x: Tensor) -> Tensor:
    return x.log2()


def _silu(x: Tensor) -> Tensor:
    return x.silu()


def _np_silu(x: np.ndarray) -> np.ndarray:
    return x * np_sigmoid(x)


def _rsqrt(x: Tensor) -> Tensor:
    return x.rsqrt()


register(unary("square", _square, np.square))
register(unary("reciprocal", _reciprocal, np.reciprocal, AWAY_FROM_ZERO))
register(unary("log2", _log2, np.log2, POSITIVE))
register(unary("silu", _silu, _np_silu))
register(unary("rsqrt", _rsqrt, lambda x: 1 / np.sqrt(x), POSITIVE))


# -------------------------------------------- reductions (ops/reduce.py, extremes.py, scan.py)
def _min(x: Tensor, axis=None, keepdims=False) -> Tensor:
    return x.amin(dim=() if axis is None else axis, keepdim=keepdims)  # (the op Min)


def _prod(x: Tensor, axis=None, keepdims=False) -> Tensor:
    return x.prod(dim=axis, keepdim=keepdims)


def _std(x: Tensor, axis=None, keepdims=False) -> Tensor:
    return x.std(dim=axis, keepdim=keepdims)  # (PyTorch's default correction of 1)


def _np_std(x: np.ndarray, axis=None, keepdims=False) -> np.ndarray:
    return np.std(x, axis=axis, keepdims=keepdims, ddof=1)


register(reduction("Min", _min, np.min, DISTINCT))
register(
    reduction(
        "Prod",
        _prod,
        np.prod,
        extra=[
            Case(
                "(2,3) one zero per row, axis=1",
                (fixed([[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]]),),
                {"axis": 1, "keepdims": False},
            ),
        ],
    )
)


def _p_norm(x: Tensor, p: float = 2, axis=None, keepdims=False) -> Tensor:
    return x.norm(p, dim=axis, keepdim=keepdims)


def _np_p_norm(x: np.ndarray, p: float = 2, axis=None, keepdims=False) -> np.ndarray:
    return np.sum(np.abs(x) ** p, axis=axis, keepdims=keepdims) ** (1 / p)


def _generate_norm(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    params = {"p": c.pick((2, 1, 3, 1.5)), "axis": c.axes(len(shape)), "keepdims": c.flag()}
    return Case("", (Values(shape, AWAY_FROM_ZERO),), params)


register(
    OpSpec(
        "Norm",
        _p_norm,
        _np_p_norm,
        (
            *(
                Case(
                    f"(2,3,4) p={p} axis={a}",
                    (Values((2, 3, 4), AWAY_FROM_ZERO),),
                    {"p": p, "axis": a},
                )
                for p in (2, 1, 3, 0.5)
                for a in (None, -1, (0, 2))
            ),
            Case("(3,) keepdims", (Values((3,), AWAY_FROM_ZERO),), {"axis": 0, "keepdims": True}),
        ),
        _generate_norm,
        "ops.reduce",
    )
)


def _cumsum(x: Tensor, axis: int) -> Tensor:
    return x.cumsum(axis)


def _np_cumsum(x: np.ndarray, axis: int) -> np.ndarray:
    return np.cumsum(x, axis)


def _generate_axis(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    return Case("", (Values(shape),), {"axis": c.axis(len(shape))})


register(
    OpSpec(
        "Cumsum",
        _cumsum,
        _np_cumsum,
        tuple(Case(f"(2,3,4) axis={a}", (Values((2, 3, 4)),), {"axis": a}) for a in (0, 1, -1)),
        _generate_axis,
        "ops.scan",
    )
)


def _topk(x: Tensor, k: int) -> Tensor:
    return x.topk(k).values


def _np_topk(x: np.ndarray, k: int) -> np.ndarray:
    return -np.sort(-x, axis=-1)[..., :k]


register(
    OpSpec(
        "topk",
        _topk,
        _np_topk,
        (
            Case("(3,5) k=2", (Values((3, 5), DISTINCT),), {"k": 2}),
            Case("(2,3,4) k=4", (Values((2, 3, 4), DISTINCT),), {"k": 4}),
        ),
        lambda c: Case("", (Values(c.shape(min_dims=1), DISTINCT),), {"k": 1}),
        "Tensor",
    )
)


# ---------------------------------------------------------------------- shape (shape.py)
def _cast(x: Tensor) -> Tensor:
    return ops.Cast.apply(x, dtype=x.dtype)  # the op itself: x.to(same dtype) returns x


def _np_copy(x: np.ndarray) -> np.ndarray:
    return np.array(x)


def _clone(x: Tensor) -> Tensor:
    return x.clone()


register(unary("Cast", _cast, _np_copy))
register(unary("Clone", _clone, _np_copy))


def _broadcast_to(x: Tensor, shape: tuple) -> Tensor:
    return x.broadcast_to(shape)


register(
    OpSpec(
        "BroadcastTo",
        _broadcast_to,
        np.broadcast_to,
        (
            Case("(3,1) -> (2,3,4)", (Values((3, 1)),), {"shape": (2, 3, 4)}),
            Case("() -> (2,2)", (Values(()),), {"shape": (2, 2)}),
            Case("(4,) -> (3,4)", (Values((4,)),), {"shape": (3, 4)}),
        ),
        lambda c: Case("", (Values((1, 3)),), {"shape": (c.integer(1, 3), 2, 3)}),
        "ops.shape",
    )
)


def _flip(x: Tensor, axes) -> Tensor:
    return x.flip(axes) if axes is not None else np.flip(x)


def _np_flip(x: np.ndarray, axes) -> np.ndarray:
    return np.flip(x, axes)


register(
    OpSpec(
        "Flip",
        _flip,
        _np_flip,
        tuple(
            Case(f"(2,3,4) axes={a}", (Values((2, 3, 4)),), {"axes": a})
            for a in (None, 0, (1, 2), -1)
        ),
        lambda c: Case("", (Values((2, 3)),), {"axes": c.pick((None, 0, 1, (0, 1)))}),
        "ops.shape",
    )
)


def _roll(x: Tensor, shifts, axes) -> Tensor:
    return x.roll(shifts, axes)


def _np_roll(x: np.ndarray, shifts, axes) -> np.ndarray:
    return np.roll(x, shifts, axes)


register(
    OpSpec(
        "Roll",
        _roll,
        _np_roll,
        (
            Case("(2,3,4) shift 1 axis 2", (Values((2, 3, 4)),), {"shifts": 1, "axes": 2}),
            Case(
                "(2,3,4) shifts (1,-2) axes (0,2)",
                (Values((2, 3, 4)),),
                {"shifts": (1, -2), "axes": (0, 2)},
            ),
            Case("(5,) shift 3 flattened", (Values((5,)),), {"shifts": 3, "axes": None}),
        ),
        lambda c: Case("", (Values((3, 4)),), {"shifts": c.integer(-3, 3), "axes": c.axis(2)}),
        "ops.shape",
    )
)


def _tile(x: Tensor, reps) -> Tensor:
    return x.repeat(*reps)


register(
    OpSpec(
        "Tile",
        _tile,
        np.tile,
        (
            Case("(2,3) repeat(2, 1)", (Values((2, 3)),), {"reps": (2, 1)}),
            Case("(3,) repeat(2, 2)", (Values((3,)),), {"reps": (2, 2)}),
            Case("(2,1,2) repeat(1, 3, 2)", (Values((2, 1, 2)),), {"reps": (1, 3, 2)}),
        ),
        lambda c: Case("", (Values((2, 2)),), {"reps": (c.integer(1, 3), c.integer(1, 3))}),
        "ops.shape",
    )
)


def _pad(x: Tensor, pad_width) -> Tensor:
    return x.pad(pad_width, value=0.5)


def _np_pad(x: np.ndarray, pad_width) -> np.ndarray:
    return np.pad(x, pad_width, constant_values=0.5)


register(
    OpSpec(
        "Pad",
        _pad,
        _np_pad,
        (
            Case("(2,3) ((1,0),(2,1))", (Values((2, 3)),), {"pad_width": ((1, 0), (2, 1))}),
            Case("(2,3) 1 all round", (Values((2, 3)),), {"pad_width": 1}),
        ),
        lambda c: Case("", (Values((2, 2)),), {"pad_width": c.integer(0, 2)}),
        "ops.shape",
    )
)


# Composites of the movement ops.
def _split_middle(x: Tensor) -> Tensor:
    return x.split(2, dim=-1)[1]


def _np_split_middle(x: np.ndarray) -> np.ndarray:
    return x[..., 2:4]


def _permute(x: Tensor) -> Tensor:
    return x.permute(2, 0, 1)


def _tril(x: Tensor) -> Tensor:
    return x.tril()


def _flatten(x: Tensor) -> Tensor:
    return x.flatten(1)


def _expand(x: Tensor) -> Tensor:
    return x.expand(2, -1, 4)


for name, fn, reference, shape in (
    ("split", _split_middle, _np_split_middle, (2, 5)),
    ("permute", _permute, lambda x: np.transpose(x, (2, 0, 1)), (2, 3, 4)),
    ("tril", _tril, np.tril, (3, 4)),
    ("flatten", _flatten, lambda x: x.reshape(x.shape[0], -1), (2, 3, 4)),
    ("expand", _expand, lambda x: np.broadcast_to(x, (2, 3, 4)), (3, 1)),
):
    register(
        OpSpec(
            name,
            fn,
            reference,
            (Case(str(shape), (Values(shape, REAL),)),),
            lambda c, shape=shape: Case("", (Values(shape),)),
            "Tensor",
        )
    )


def _softmax_axes(x: Tensor) -> Tensor:
    return x.softmax(dim=(0, 2))


def _np_softmax_axes(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=(0, 2), keepdims=True))
    return e / e.sum(axis=(0, 2), keepdims=True)


def _log_softmax_axes(x: Tensor) -> Tensor:
    return x.log_softmax(axis=(1, -1))


def _np_log_softmax_axes(x: np.ndarray) -> np.ndarray:
    shifted = x - x.max(axis=(1, 2), keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=(1, 2), keepdims=True))


for name, fn, reference in (
    ("softmax(dim=tuple)", _softmax_axes, _np_softmax_axes),
    ("log_softmax(axis=tuple)", _log_softmax_axes, _np_log_softmax_axes),
):
    register(
        OpSpec(
            name,
            fn,
            reference,
            (Case("(2,3,4)", (Values((2, 3, 4)),)), Case("(3,2,2)", (Values((3, 2, 2)),))),
            lambda c: Case("", (Values((c.integer(1, 3), 2, c.integer(1, 3))),)),
            "Tensor",
        )
    )


# More Tensor spellings, each a composite of the ops above or of older ones.
def _view(x: Tensor) -> Tensor:
    return x.view(4, -1)


def _chunk_last(x: Tensor) -> Tensor:
    return x.chunk(3, dim=1)[-1]


def _triu(x: Tensor) -> Tensor:
    return x.triu(1)


def _gather(x: Tensor) -> Tensor:
    return x.gather(1, np.array([[0, 2, 2], [1, 0, 1]]))  # repeats add up


def _np_gather(x: np.ndarray) -> np.ndarray:
    return np.take_along_axis(x, np.array([[0, 2, 2], [1, 0, 1]]), axis=1)


_SCATTER_INDEX = np.array([[2, 0], [1, 1]])  # (2, 2) into a (2, 3) tensor: row 1 repeats 1


def _scatter(x: Tensor) -> Tensor:
    return x.scatter(1, _SCATTER_INDEX[:, :1], x[:, 1:] * 3)  # self and src from one tensor


def _np_scatter(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.put_along_axis(out, _SCATTER_INDEX[:, :1], x[:, 1:2] * 3, axis=1)
    return out


def _scatter_add(x: Tensor) -> Tensor:
    return x.scatter_add(1, _SCATTER_INDEX, x[:, :2] * x[:, 1:])  # repeats add up


def _np_scatter_add(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    for i, row in enumerate(_SCATTER_INDEX):
        for j, k in enumerate(row):
            out[i, k] += x[i, j] * x[i, j + 1]
    return out


def _moveaxis(x: Tensor) -> Tensor:
    return x.moveaxis(0, -1)


def _unbind_first(x: Tensor) -> Tensor:
    return x.unbind(1)[0]


def _amax(x: Tensor) -> Tensor:
    return x.amax(dim=1)


def _amin(x: Tensor) -> Tensor:
    return x.amin(dim=(0, 1))


def _max_dim(x: Tensor) -> Tensor:
    return x.max(dim=-1).values


def _mm(x: Tensor) -> Tensor:
    return x.mm(x.t())


def _hardtanh(x: Tensor) -> Tensor:
    return x.hardtanh(-0.525, 0.525)


for name, fn, reference, shape, domain in (
    ("view", _view, lambda x: x.reshape(4, -1), (2, 3, 4), REAL),
    ("chunk", _chunk_last, lambda x: x[:, 4:], (2, 5), REAL),
    ("triu", _triu, lambda x: np.triu(x, 1), (3, 4), REAL),
    ("gather", _gather, _np_gather, (2, 3), REAL),
    ("scatter", _scatter, _np_scatter, (2, 3), REAL),
    ("scatter_add", _scatter_add, _np_scatter_add, (2, 3), REAL),
    ("moveaxis", _moveaxis, lambda x: np.moveaxis(x, 0, -1), (2, 3, 4), REAL),
    ("unbind", _unbind_first, lambda x: x[:, 0], (2, 3, 4), REAL),
    ("amax", _amax, lambda x: x.max(axis=1), (2, 3, 4), DISTINCT),
    ("amin", _amin, lambda x: x.min(axis=(0, 1)), (2, 3, 4), DISTINCT),
    ("max(dim=).values", _max_dim, lambda x: x.max(axis=-1), (2, 3, 4), DISTINCT),
    ("mm", _mm, lambda x: x @ x.T, (3, 4), REAL),
    ("hardtanh", _hardtanh, lambda x: np.clip(x, -0.525, 0.525), (3, 4), DISTINCT),
):
    register(
        OpSpec(
            name,
            fn,
            reference,
            (Case(str(shape), (Values(shape, domain),)),),
            lambda c, shape=shape, domain=domain: Case("", (Values(shape, domain),)),
            "Tensor",
        )
    )
