"""Op-table rows for the movement ops (ops/movement.py): reshape, transpose, indexing,
concatenate/stack, where and masked_fill, with the Tensor spellings that route to them.

Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...creation import concatenate, stack, where
from ...tensor import Tensor
from ..opspec import (
    BOOL,
    Case,
    Choices,
    OpSpec,
    Values,
    param_text,
    register,
    shape_text,
)


def _np_getitem(x: np.ndarray, index: Any) -> np.ndarray:
    return x[index]


def _np_concatenate(*arrays: np.ndarray, axis: int = 0) -> np.ndarray:
    return np.concatenate(arrays, axis=axis)


def _np_stack(*arrays: np.ndarray, axis: int = 0) -> np.ndarray:
    return np.stack(arrays, axis=axis)


def _np_masked_fill(x: np.ndarray, mask: np.ndarray, value: float) -> np.ndarray:
    return np.where(mask, value, x)


def _reshape(x: Tensor, shape: tuple) -> Tensor:
    return x.reshape(shape)


def _transpose(x: Tensor, axes: tuple | None = None) -> Tensor:
    return x.T if axes is None else x.permute(tuple(axes))


def _getitem(x: Tensor, index: Any) -> Tensor:
    return x[index]


def _concatenate(*tensors: Tensor, axis: int = 0) -> Tensor:
    return concatenate(tensors, axis=axis)


def _stack(*tensors: Tensor, axis: int = 0) -> Tensor:
    return stack(tensors, axis=axis)


# ---------------------------------------------------------------- movement entries


def _generate_reshape(c: Choices) -> Case:
    shape = c.shape()
    size = int(np.prod(shape, dtype=np.int64))
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    target = c.pick(((size,), (-1,), (1, size), (c.pick(divisors), -1), (*shape, 1)))
    return Case("", (Values(shape),), {"shape": target})


register(
    OpSpec(
        "Reshape",
        _reshape,
        np.reshape,
        tuple(
            Case(f"{shape_text(s)} -> {param_text(t)}", (Values(s),), {"shape": t})
            for s, t in (
                ((2, 3, 4), (6, 4)),
                ((2, 3, 4), (4, -1)),
                ((2, 3, 4), (24,)),
                ((), (1, 1)),
                ((3, 1), (3,)),
            )
        ),
        _generate_reshape,
        "ops.movement",
    )
)


def _generate_transpose(c: Choices) -> Case:
    shape = c.shape()
    axes = c.permutation(len(shape)) if c.flag() else None
    return Case("", (Values(shape),), {"axes": axes})


register(
    OpSpec(
        "Transpose",
        _transpose,
        np.transpose,
        tuple(
            Case(f"{shape_text(s)} axes={param_text(a)}", (Values(s),), {"axes": a})
            for s, a in (
                ((3, 4), None),
                ((2, 3, 4), None),
                ((2, 3, 4), (1, 0, 2)),
                ((2, 3, 4), (2, 0, 1)),
                ((2, 3, 4), (0, -1, 1)),
            )
        ),
        _generate_transpose,
        "ops.movement",
    )
)


def _generate_swapaxes(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    return Case("", (Values(shape),), {"axis1": c.axis(len(shape)), "axis2": c.axis(len(shape))})


register(
    OpSpec(
        "swapaxes",
        Tensor.swapaxes,
        np.swapaxes,
        tuple(
            Case(f"(2,3,4) swapaxes({a},{b})", (Values((2, 3, 4)),), {"axis1": a, "axis2": b})
            for a, b in ((0, 2), (-1, -2), (1, 1))
        ),
        _generate_swapaxes,
        "Tensor",
        "Transpose of two axes",
    )
)


def _generate_unsqueeze(c: Choices) -> Case:
    shape = c.shape()
    return Case("", (Values(shape),), {"axis": c.integer(-len(shape) - 1, len(shape))})


register(
    OpSpec(
        "unsqueeze",
        Tensor.unsqueeze,
        np.expand_dims,
        tuple(Case(f"(3,4) unsqueeze({a})", (Values((3, 4)),), {"axis": a}) for a in (0, 1, 2, -1)),
        _generate_unsqueeze,
        "Tensor",
        "Reshape that inserts an axis of size 1",
    )
)


def _generate_squeeze(c: Choices) -> Case:
    shape = tuple(1 if c.flag() else n for n in c.shape())
    ones = [i for i, n in enumerate(shape) if n == 1]
    axis = None if not ones or c.flag() else tuple(i for i in ones if c.flag()) or ones[0]
    return Case("", (Values(shape),), {"axis": axis})


register(
    OpSpec(
        "squeeze",
        Tensor.squeeze,
        np.squeeze,
        tuple(
            Case(f"(1,3,1,4) squeeze({param_text(a)})", (Values((1, 3, 1, 4)),), {"axis": a})
            for a in (None, 0, 2, (0, 2), -2)
        ),
        _generate_squeeze,
        "Tensor",
        "Reshape that drops axes of size 1",
    )
)

_GETITEM_CASES = (
    ("basic: x[1]", (3, 4), 1),
    ("basic: x[-1, 1:3]", (3, 4), (-1, slice(1, 3))),
    ("basic: x[:, ::-2]", (3, 4), (slice(None), slice(None, None, -2))),
    ("basic: x[None, ..., 0]", (2, 3, 4), (None, Ellipsis, 0)),
    ("basic: x[1:, None, 2]", (3, 4), (slice(1, None), None, 2)),
    ("array: x[[0,2,0]] repeated rows", (3, 4), np.array([0, 2, 0])),
    ("array: x[:, [1,1,3,1]] repeated columns", (3, 4), (slice(None), np.array([1, 1, 3, 1]))),
    ("array: x[[0,1,0],[2,2,2]] repeated pairs", (3, 4), (np.array([0, 1, 0]), np.array([2] * 3))),
    ("array: x[[[0,1],[1,1]]] 2-d index", (3, 4), np.array([[0, 1], [1, 1]])),
    ("array: x[[-1,0,-1,2]] negative repeated rows", (3, 4), np.array([-1, 0, -1, 2])),
    ("array: x[[[1],[1]]] rows of a 3-d tensor", (2, 3, 2), np.array([[1], [1]])),
    ("array: x[-1, [3,-1]] negative indices", (3, 4), (-1, np.array([3, -1]))),
    ("bool: x[[True,False,True]]", (3, 4), np.array([True, False, True])),
)


def _generate_getitem(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    first = shape[0]
    kind = c.pick(("int", "slice", "array", "array_pair", "column_array"))
    if kind in ("array_pair", "column_array") and len(shape) < 2:
        kind = "array"
    if kind == "int":
        index: Any = c.integer(-first, first - 1)
    elif kind == "slice":
        index = (slice(c.integer(0, first - 1), None, c.pick((1, 2, -1))),)
        if len(shape) > 1:
            index += (c.integer(0, shape[1] - 1),)
    elif kind == "array":
        index = c.index_array((c.integer(1, 5),), first)
    elif kind == "array_pair":
        count = c.integer(1, 5)
        index = (c.index_array((count,), first), c.index_array((count,), shape[1]))
    else:
        index = (slice(None), c.index_array((c.integer(1, 5),), shape[1]))
    return Case("", (Values(shape),), {"index": index})


register(
    OpSpec(
        "GetItem",
        _getitem,
        _np_getitem,
        tuple(Case(label, (Values(s),), {"index": i}) for label, s, i in _GETITEM_CASES),
        _generate_getitem,
        "ops.movement",
        "basic and integer-array indexing; repeated indices accumulate",
    )
)


def _generate_concatenate(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    axis = c.axis(len(shape))
    pieces = []
    for _ in range(c.integer(1, 3)):
        piece = list(shape)
        piece[axis] = c.integer(1, 3)
        pieces.append(Values(tuple(piece)))
    return Case("", tuple(pieces), {"axis": axis})


register(
    OpSpec(
        "Concatenate",
        _concatenate,
        _np_concatenate,
        (
            Case("(2,3) & (1,3) axis=0", (Values((2, 3)), Values((1, 3))), {"axis": 0}),
            Case(
                "(2,1) & (2,3) & (2,2) axis=1",
                (Values((2, 1)), Values((2, 3)), Values((2, 2))),
                {"axis": 1},
            ),
            Case("(2,3,1) & (2,3,2) axis=-1", (Values((2, 3, 1)), Values((2, 3, 2))), {"axis": -1}),
            Case("(4,) alone", (Values((4,)),), {"axis": 0}),
            Case(
                "(2,3) & constant (1,3)",
                (Values((2, 3)), Values((1, 3), requires_grad=False)),
                {"axis": 0},
            ),
        ),
        _generate_concatenate,
        "ops.movement",
    )
)


def _generate_stack(c: Choices) -> Case:
    shape = c.shape(max_dims=2)
    count = c.integer(1, 3)
    return Case(
        "",
        tuple(Values(shape) for _ in range(count)),
        {"axis": c.integer(-len(shape) - 1, len(shape))},
    )


register(
    OpSpec(
        "Stack",
        _stack,
        _np_stack,
        tuple(
            Case(f"3 x (2,3) axis={a}", (Values((2, 3)),) * 3, {"axis": a}) for a in (0, 1, 2, -1)
        )
        + (Case("2 x () axis=0", (Values(()), Values(())), {"axis": 0}),),
        _generate_stack,
        "ops.movement",
    )
)


def _generate_where(c: Choices) -> Case:
    sc, sa, sb = c.broadcastable_shapes(3)
    return Case("", (Values(sc, BOOL), Values(sa), Values(sb)))


register(
    OpSpec(
        "Where",
        where,
        np.where,
        (
            Case("(3,4) ? (3,4) : (3,4)", (Values((3, 4), BOOL), Values((3, 4)), Values((3, 4)))),
            Case(
                "(4,) ? (3,1) : (): all broadcast",
                (Values((4,), BOOL), Values((3, 1)), Values(())),
            ),
            Case(
                "(3,4) ? (3,4) : constant (4,)",
                (Values((3, 4), BOOL), Values((3, 4)), Values((4,), requires_grad=False)),
            ),
            Case(
                "(2,1,4) ? (3,4) : (2,3,1): batch broadcast",
                (Values((2, 1, 4), BOOL), Values((3, 4)), Values((2, 3, 1))),
            ),
        ),
        _generate_where,
        "ops.movement",
    )
)


def _broadcastable_to(c: Choices, shape: tuple) -> tuple:
    """A shape that broadcasts to `shape` without enlarging it (a mask's shape)."""
    ndim = c.integer(0, len(shape))
    return tuple(1 if c.flag() else n for n in shape[len(shape) - ndim :])


def _generate_masked_fill(c: Choices) -> Case:
    shape = c.shape()
    return Case(
        "",
        (Values(shape), Values(_broadcastable_to(c, shape), BOOL)),
        {"value": c.pick((0.0, -1e9, 2.5))},
    )


register(
    OpSpec(
        "MaskedFill",
        Tensor.masked_fill,
        _np_masked_fill,
        (
            Case(
                "(3,4) mask (3,4) value=0",
                (Values((3, 4)), Values((3, 4), BOOL)),
                {"value": 0.0},
            ),
            Case(
                "(3,4) mask (4,) value=-1e9",
                (Values((3, 4)), Values((4,), BOOL)),
                {"value": -1e9},
            ),
            Case(
                "(2,3,4) mask (3,1) value=2.5",
                (Values((2, 3, 4)), Values((3, 1), BOOL)),
                {"value": 2.5},
            ),
        ),
        _generate_masked_fill,
        "ops.movement",
    )
)


def _diagonal(x: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return x.diagonal(offset, dim1, dim2)


def _np_diagonal(x: np.ndarray, offset: int = 0, dim1: int = 0, dim2: int = 1) -> np.ndarray:
    return np.diagonal(x, offset, dim1, dim2)


register(
    OpSpec(
        "Diagonal",
        _diagonal,
        _np_diagonal,
        (
            Case("(3,4)", (Values((3, 4)),), {}),
            Case("(3,4) offset=1", (Values((3, 4)),), {"offset": 1}),
            Case("(4,3) offset=-2", (Values((4, 3)),), {"offset": -2}),
            Case("(2,3,4) dims (2, 0)", (Values((2, 3, 4)),), {"dim1": 2, "dim2": 0}),
        ),
        lambda c: Case("", (Values((c.integer(1, 4), c.integer(1, 4))),), {}),
        "ops.movement",
        "a view of the diagonal, as PyTorch",
    )
)
