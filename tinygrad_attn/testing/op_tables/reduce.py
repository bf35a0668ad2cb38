"""Op-table rows for the reductions (ops/reduce.py): every axis form, with and without keepdims.

A new reduction is one `register(reduction(name, Tensor.method, np.function))` line (plus
`extra` cases for its edge values). Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...tensor import Tensor
from ..opspec import (
    DISTINCT,
    REAL,
    Case,
    Choices,
    Domain,
    OpSpec,
    Values,
    fixed,
    param_text,
    register,
)

_REDUCE_AXES = (None, 0, 1, 2, -1, (0, 2), (-1, 0))


def reduction(
    name: str, fn: Callable, reference: Callable, domain: Domain = REAL, extra: Sequence = ()
) -> OpSpec:
    """A reduction: every axis form (None, each axis, negative, tuples), with and without
    keepdims."""
    cases = [
        Case(
            f"(2,3,4) axis={param_text(axis)} keepdims={keepdims}",
            (Values((2, 3, 4), domain),),
            {"axis": axis, "keepdims": keepdims},
        )
        for axis in _REDUCE_AXES
        for keepdims in (False, True)
    ]
    cases += [
        Case("(): 0-d, axis=None", (Values((), domain),), {"axis": None, "keepdims": False}),
        Case("(5,) axis=0", (Values((5,), domain),), {"axis": 0, "keepdims": False}),
        *extra,
    ]

    def generate(c: Choices) -> Case:
        shape = c.shape()
        params = {"axis": c.axes(len(shape)), "keepdims": c.flag()}
        if name in ("Var", "Std"):
            params["ddof"] = c.pick((0, 1)) if _reduced_count(shape, params["axis"]) > 1 else 0
        return Case("", (Values(shape, domain),), params)

    return OpSpec(name, fn, reference, tuple(cases), generate, "ops.reduce")


def _reduced_count(shape: tuple, axis: Any) -> int:
    if axis is None:
        axes = range(len(shape))
    else:
        axes = (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


# --------------------------------------------------------------- reduction entries


def _amax(x: Tensor, axis: Any = None, keepdims: bool = False) -> Tensor:
    return x.amax(dim=() if axis is None else axis, keepdim=keepdims)  # (the op Max)


def _var(x: Tensor, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Tensor:
    return x.var(dim=axis, keepdim=keepdims, correction=ddof)


def _std(x: Tensor, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Tensor:
    return x.std(dim=axis, keepdim=keepdims, correction=ddof)


register(reduction("Sum", Tensor.sum, np.sum))
register(reduction("Mean", Tensor.mean, np.mean))
register(
    reduction(
        "Max",
        _amax,
        np.max,
        DISTINCT,
        extra=[
            # Two tied maxima: the gradient splits evenly, which is also what central
            # differences measure (+eps moves the max, -eps leaves the other one in place).
            Case(
                "(2,4) two tied maxima per row, axis=1",
                (fixed([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, 0.5, 2.0]]),),
                {"axis": 1, "keepdims": False},
            ),
            Case(
                "(2,3) two tied maxima overall, axis=None",
                (fixed([[0.5, 4.0, -1.0], [4.0, 2.0, 3.0]]),),
                {"axis": None, "keepdims": True},
            ),
        ],
    )
)
for _name, _fn, _reference in (("Var", _var, np.var), ("Std", _std, np.std)):
    _unbiased = [
        Case(
            f"(3,4) axis={param_text(axis)} ddof=1",
            (Values((3, 4)),),
            {"axis": axis, "keepdims": False, "ddof": 1},
        )
        for axis in (None, 0, -1)
    ]
    register(reduction(_name, _fn, _reference, extra=_unbiased))
