"""Op-table rows for the write ops (ops/writes.py): `t[index] = v` through a view
(CopySlices) or with a mask or index array (IndexPut), and `copy_` of a graph tensor (Copy).

Each row writes into a tensor of a graph (`y = x * 1`), so the write is recorded and both the
tensor written into and the value written get gradients. Test data only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...tensor import Tensor
from ..opspec import BOOL, Case, Choices, OpSpec, Values, register


def _set_item(x: Tensor, value: Tensor, index: Any, through: str = "") -> Tensor:
    y = x * 1.0  # a tensor of the graph, so the write is recorded
    target = y.T if through == "T" else y
    target[index] = value
    return y


def _np_set_item(x: np.ndarray, value: np.ndarray, index: Any, through: str = "") -> np.ndarray:
    y = x.copy()
    target = y.T if through == "T" else y
    target[index] = value
    return y


def _copy_into(x: Tensor, value: Tensor) -> Tensor:
    y = x * 1.0
    y.copy_(value)
    return y


def _np_copy_into(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    return np.broadcast_to(value, x.shape).astype(x.dtype)


def _generate_slice(c: Choices) -> Case:
    rows, cols = c.integer(2, 4), c.integer(2, 4)
    start = c.integer(0, rows - 1)
    return Case("", (Values((rows, cols)), Values((cols,))), {"index": start})


register(
    OpSpec(
        "CopySlices",
        _set_item,
        _np_set_item,
        (
            Case("(3,4)[0:2] = (2,4)", (Values((3, 4)), Values((2, 4))), {"index": slice(0, 2)}),
            Case("(3,4)[1] = (4,)", (Values((3, 4)), Values((4,))), {"index": 1}),
            Case("(3,4)[:, 2] = ()", (Values((3, 4)), Values(())), {"index": (slice(None), 2)}),
            Case(
                "(2,3,4)[..., 1:3] = (3,1): broadcast value",
                (Values((2, 3, 4)), Values((3, 1))),
                {"index": (Ellipsis, slice(1, 3))},
            ),
            Case(
                "(3,4).T[1] = (3,): through a transpose view",
                (Values((3, 4)), Values((3,))),
                {"index": 1, "through": "T"},
            ),
            Case(
                "(3,4)[0] = (4,): only the value needs grad",
                (Values((3, 4), requires_grad=False), Values((4,))),
                {"index": 0},
            ),
        ),
        _generate_slice,
        "ops.writes",
        "t[basic index] = value on a tensor of a graph",
    )
)


def _generate_put(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    return Case("", (Values(shape), Values(()), Values(shape, BOOL)), {})


def _masked_put(x: Tensor, value: Tensor, mask: np.ndarray) -> Tensor:
    return _set_item(x, value, mask)


def _np_masked_put(x: np.ndarray, value: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _np_set_item(x, value, mask)


register(
    OpSpec(
        "IndexPut",
        _masked_put,
        _np_masked_put,
        (
            Case("(3,4)[mask] = ()", (Values((3, 4)), Values(()), Values((3, 4), BOOL))),
            Case("(3,4)[row mask] = (4,)", (Values((3, 4)), Values((4,)), Values((3,), BOOL))),
        ),
        _generate_put,
        "ops.writes",
        "t[mask] = value on a tensor of a graph",
    )
)


register(
    OpSpec(
        "Copy",
        _copy_into,
        _np_copy_into,
        (
            Case("(3,4).copy_((3,4))", (Values((3, 4), requires_grad=False), Values((3, 4)))),
            Case(
                "(3,4).copy_((4,)): broadcast",
                (Values((3, 4), requires_grad=False), Values((4,))),
            ),
        ),
        lambda c: Case("", (Values((2, 3), requires_grad=False), Values((3,)))),
        "ops.writes",
        "y.copy_(value) on a tensor of a graph",
    )
)


def _index_add(src: Tensor, index: Any, shape: tuple) -> Tensor:
    from ...ops import IndexAdd

    return IndexAdd.apply(src, index=index, shape=shape)


def _np_index_add(src: np.ndarray, index: Any, shape: tuple) -> np.ndarray:
    out = np.zeros(shape)
    np.add.at(out, index, src)
    return out


register(
    OpSpec(
        "IndexAdd",
        _index_add,
        _np_index_add,
        (
            Case(
                "(2,4) into (3,4) at [1:3]",
                (Values((2, 4)),),
                {"index": slice(1, 3), "shape": (3, 4)},
            ),
            Case(
                "(4,3) into (3,3) at ids [0,2,0,1]: repeats add",
                (Values((4, 3)),),
                {"index": np.array([0, 2, 0, 1]), "shape": (3, 3)},
            ),
        ),
        lambda c: Case("", (Values((2, 3)),), {"index": np.array([1, 1]), "shape": (2, 3)}),
        "ops.movement",
        "GetItem's gradient as an op (what makes indexing twice-differentiable)",
    )
)
