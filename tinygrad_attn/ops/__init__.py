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
    DivRounded,
    Erf,
    Exp,
    Log,
    Mul,
    Neg,
    Pow,
    Relu,
    Remainder,
    Sigmoid,
    Sqrt,
    Sub,
    Tanh,
)
from .extremes import Max, Min
from .matmul import Einsum, MatMul
from .movement import (
    Concatenate,
    Diagonal,
    GetItem,
    IndexAdd,
    MaskedFill,
    Reshape,
    Stack,
    Transpose,
    Where,
)
from .reduce import Mean, Norm, Prod, Std, Sum, Var
from .scan import Cumsum
from .shape import BroadcastTo, Cast, Clone, Flip, Pad, Roll, Tile
from .softmax import LogSoftmax, Softmax
from .unary import (
    Clip,
    Cos,
    Elu,
    Expm1,
    LeakyRelu,
    Log1p,
    Maximum,
    Minimum,
    Round,
    Sign,
    Sin,
    Softplus,
)
from .writes import Copy, CopySlices, IndexPut

__all__ = [
    "Abs",
    "Add",
    "BroadcastTo",
    "Cast",
    "Clip",
    "Clone",
    "Concatenate",
    "Copy",
    "CopySlices",
    "Cos",
    "Cumsum",
    "Diagonal",
    "Div",
    "DivRounded",
    "Elu",
    "Erf",
    "Exp",
    "Expm1",
    "Flip",
    "GetItem",
    "IndexAdd",
    "IndexPut",
    "LeakyRelu",
    "Log",
    "Log1p",
    "LogSoftmax",
    "MaskedFill",
    "Einsum",
    "MatMul",
    "Max",
    "Maximum",
    "Mean",
    "Min",
    "Minimum",
    "Mul",
    "Neg",
    "Pad",
    "Pow",
    "Norm",
    "Prod",
    "Relu",
    "Remainder",
    "Reshape",
    "Roll",
    "Round",
    "ScaledDotProductAttention",
    "Sigmoid",
    "Sign",
    "Sin",
    "Softmax",
    "Softplus",
    "Sqrt",
    "Stack",
    "Sub",
    "Std",
    "Sum",
    "Tanh",
    "Tile",
    "Transpose",
    "Var",
    "Where",
]
