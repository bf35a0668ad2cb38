"""Primitive ops: one `Function` subclass per op, a file per family.

Each op's `forward` takes and returns ndarrays and saves what its `backward` needs; `backward`
returns one gradient per input (None where none flows) in the output's (broadcast) shape. No op
un-broadcasts, accumulates or touches `.grad`: the engine does, in one place.

`Tensor`'s methods call the ops through this package (`ops.Exp.apply(x)`), so it re-exports every
op class.
"""

from .attention import ScaledDotProductAttention
from .elementwise import (
    Abs,
    Add,
    Div,
    Erf,
    Exp,
    Log,
    Mul,
    Neg,
    Pow,
    Relu,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
)
from .matmul import MatMul
from .movement import Concatenate, GetItem, MaskedFill, Reshape, Stack, Transpose, Where
from .reduce import Max, Mean, Sum, Var
from .softmax import LogSoftmax, Softmax

__all__ = [
    "Abs",
    "Add",
    "Concatenate",
    "Div",
    "Erf",
    "Exp",
    "GetItem",
    "Log",
    "LogSoftmax",
    "MaskedFill",
    "MatMul",
    "Max",
    "Mean",
    "Mul",
    "Neg",
    "Pow",
    "Relu",
    "Reshape",
    "ScaledDotProductAttention",
    "Sigmoid",
    "Softmax",
    "Sqrt",
    "Stack",
    "Sub",
    "Sum",
    "Tanh",
    "Transpose",
    "Var",
    "Where",
]
