"""Op-table rows for matrix products (ops/matmul.py): every shape form `np.matmul` accepts.

Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

import operator

import numpy as np

from ..opspec import (
    Case,
    Choices,
    OpSpec,
    Values,
    register,
)

_MATMUL_SHAPES = (
    ("(3,) @ (3,): dot product", (3,), (3,)),
    ("(3,) @ (3,4): vector-matrix", (3,), (3, 4)),
    ("(2,3) @ (3,): matrix-vector", (2, 3), (3,)),
    ("(2,3) @ (3,4)", (2, 3), (3, 4)),
    ("(2,2,3) @ (3,4): rows times one weight", (2, 2, 3), (3, 4)),
    ("(2,3) @ (2,3,4): one left, batched right", (2, 3), (2, 3, 4)),
    ("(2,2,3) @ (2,3,4): batched", (2, 2, 3), (2, 3, 4)),
    ("(2,1,2,3) @ (3,3,4): broadcast batch axes", (2, 1, 2, 3), (3, 3, 4)),
    ("(4,) @ (2,4,3): vector, batched right", (4,), (2, 4, 3)),
    ("(2,3,4) @ (4,): batched left, vector", (2, 3, 4), (4,)),
    ("(3,3) @ (3,3): square", (3, 3), (3, 3)),
)


def _generate_matmul(c: Choices) -> Case:
    m, k, n = c.integer(1, 4), c.integer(1, 4), c.integer(1, 4)
    batch_a, batch_b = c.broadcastable_shapes(2, max_dims=2, max_side=3)
    form = c.pick(("matrix", "vector_left", "vector_right", "vectors"))
    left = (k,) if form in ("vector_left", "vectors") else (*batch_a, m, k)
    right = (k,) if form in ("vector_right", "vectors") else (*batch_b, k, n)
    return Case("", (Values(left), Values(right)))


register(
    OpSpec(
        "MatMul",
        operator.matmul,
        np.matmul,
        tuple(Case(label, (Values(a), Values(b))) for label, a, b in _MATMUL_SHAPES)
        + (Case("(2,3) @ constant (3,4)", (Values((2, 3)), Values((3, 4), requires_grad=False))),),
        _generate_matmul,
        "ops.matmul",
    )
)


def _generate_rmatmul(c: Choices) -> Case:
    m, k, n = c.integer(1, 4), c.integer(1, 4), c.integer(1, 4)
    return Case("", (Values((m, k), as_tensor=False, requires_grad=False), Values((k, n))))


register(
    OpSpec(
        "rmatmul",
        operator.matmul,
        np.matmul,
        (
            Case(
                "ndarray (2,3) @ (3,4)",
                (Values((2, 3), as_tensor=False, requires_grad=False), Values((3, 4))),
            ),
        ),
        _generate_rmatmul,
        "Tensor",
        "ndarray @ x (Tensor.__rmatmul__)",
    )
)
