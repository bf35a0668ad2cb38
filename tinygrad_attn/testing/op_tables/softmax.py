"""Op-table rows for softmax and log-softmax (ops/softmax.py).

`softmax_spec` and the NumPy references are shared with the functional rows (F.softmax).
Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...tensor import Tensor
from ..opspec import (
    LOGITS,
    Case,
    Choices,
    OpSpec,
    Values,
    register,
)


def np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def np_log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return x - np.log(np.exp(x).sum(axis=axis, keepdims=True))


def softmax_spec(name: str, fn: Callable, reference: Callable) -> OpSpec:
    def generate(c: Choices) -> Case:
        shape = c.shape(min_dims=1)
        return Case("", (Values(shape),), {"axis": c.axis(len(shape))})

    return OpSpec(
        name,
        fn,
        reference,
        (
            Case("(3,5) axis=-1", (Values((3, 5)),), {"axis": -1}),
            Case("(3,5) axis=0", (Values((3, 5)),), {"axis": 0}),
            Case("(2,3,4) axis=1", (Values((2, 3, 4)),), {"axis": 1}),
            Case("(1,) axis=0: one element", (Values((1,)),), {"axis": 0}),
            Case("(2,4) logits in [-50,50]", (Values((2, 4), LOGITS),), {"axis": -1}),
        ),
        generate,
        "ops.softmax",
    )


register(softmax_spec("Softmax", Tensor.softmax, np_softmax))
register(softmax_spec("LogSoftmax", Tensor.log_softmax, np_log_softmax))
