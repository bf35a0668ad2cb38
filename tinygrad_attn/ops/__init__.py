"""Primitive ops: one `Function` subclass per op, a file per family.

Each op's `forward` takes and returns ndarrays and saves what its `backward` needs; `backward`
returns one gradient per input (None where none flows) in the output's (broadcast) shape. No op
un-broadcasts, accumulates or touches `.grad`: the engine does, in one place.

`Tensor`'s methods call the ops through this package (`ops.Exp.apply(x)`), so it re-exports every
op class. The families: arithmetic, math_functions, activations, clamping; reduce, extremes,
scan; softmax; matmul; shape, movement (views among them), writes (in-place); layers (fused
Linear, LayerNorm, GELU, cross-entropy) and attention.
"""

from .activations import Elu, LeakyRelu, Relu, Softplus
from .arithmetic import Add, Div, DivRounded, Mul, Neg, Pow, Remainder, Sub
from .attention import ScaledDotProductAttention
from .clamping import Clip, Maximum, Minimum
from .extremes import Max, Min
from .math_functions import (
    Abs,
    Cos,
    Erf,
    Exp,
    Expm1,
    Log,
    Log1p,
    Round,
    Sigmoid,
    Sign,
    Sin,
    Sqrt,
    Tanh,
)
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
