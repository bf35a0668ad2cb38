"""PyTorch's `torch.*` functions (`torch.exp(x)`, `torch.matmul(q, k)`, `torch.max(x, dim=1)`,
`torch.einsum(...)`), so that model code written against `torch` runs with only its import
changed. Each is written out and calls the Tensor method of the same name with the same
arguments (so both spellings behave alike, and "go to definition" lands on the method), or
composes Tensor ops; `einsum` is `ops.Einsum`. No backward code lives here.
"""

from __future__ import annotations

import builtins
import string
from typing import Any

import numpy as np

from . import functional, ops
from .functional import _tensor
from .random import Generator, numpy_generator
from .state import get_default_dtype
from .tensor import Tensor
from .tensor_methods import check_device

__all__ = [
    "abs", "addmm", "allclose", "amax", "amin", "argmax", "argmin", "argsort", "bmm",
    "ceil", "chunk", "clamp", "clamp_min", "clip", "clone", "cos", "cumsum", "einsum",
    "empty", "equal", "erf", "exp", "expm1", "eye", "flatten", "flip", "floor", "frac",
    "gather", "is_tensor", "isfinite", "isinf", "isnan", "linspace", "log", "log1p", "log2",
    "log_softmax", "logsumexp", "masked_fill", "matmul", "max", "maximum", "mean", "min",
    "minimum", "mm", "neg", "norm", "normal", "numel", "outer", "permute", "pow", "prod",
    "randperm", "reciprocal", "relu", "remainder", "reshape", "round", "rsqrt", "sgn",
    "sigmoid", "sign", "sin", "softmax", "sort", "split", "sqrt", "square", "squeeze", "std",
    "sum", "tanh", "transpose", "trunc", "unsqueeze", "var",
]  # fmt: skip


def _input(x: Any, fn: str) -> Tensor:
    """`x` as a Tensor (an ndarray as a constant), as `F`'s functions take it; else a TypeError."""
    return _tensor(x, f"torch.{fn}")


# -------------------------------------------------------- elementwise (the Tensor method)
def abs(input: Any) -> Tensor:  # noqa: A001
    return _input(input, "abs").abs()


def cos(input: Any) -> Tensor:
    return _input(input, "cos").cos()


def erf(input: Any) -> Tensor:
    return _input(input, "erf").erf()


def exp(input: Any) -> Tensor:
    return _input(input, "exp").exp()


def log(input: Any) -> Tensor:
    return _input(input, "log").log()


def relu(input: Any) -> Tensor:
    return _input(input, "relu").relu()


def rsqrt(input: Any) -> Tensor:
    return _input(input, "rsqrt").rsqrt()


def sigmoid(input: Any) -> Tensor:
    return _input(input, "sigmoid").sigmoid()


def sign(input: Any) -> Tensor:
    return _input(input, "sign").sign()


def sin(input: Any) -> Tensor:
    return _input(input, "sin").sin()


def sqrt(input: Any) -> Tensor:
    return _input(input, "sqrt").sqrt()


def square(input: Any) -> Tensor:
    return _input(input, "square").square()


def tanh(input: Any) -> Tensor:
    return _input(input, "tanh").tanh()


def log1p(input: Any) -> Tensor:
    return _input(input, "log1p").log1p()


def log2(input: Any) -> Tensor:
    return _input(input, "log2").log2()


def expm1(input: Any) -> Tensor:
    return _input(input, "expm1").expm1()


def floor(input: Any) -> Tensor:
    return _input(input, "floor").floor()


def ceil(input: Any) -> Tensor:
    return _input(input, "ceil").ceil()


def trunc(input: Any) -> Tensor:
    return _input(input, "trunc").trunc()


def frac(input: Any) -> Tensor:
    return _input(input, "frac").frac()


def round(input: Any, *, decimals: int = 0) -> Tensor:  # noqa: A001
    return _input(input, "round").round(decimals=decimals)


def neg(input: Any) -> Tensor:
    return _input(input, "neg").neg()


def reciprocal(input: Any) -> Tensor:
    return _input(input, "reciprocal").reciprocal()


def sgn(input: Any) -> Tensor:
    return _input(input, "sgn").sgn()


def remainder(input: Any, other: Any) -> Tensor:
    return _input(input, "remainder").remainder(other)


def pow(input: Any, exponent: Any) -> Tensor:  # noqa: A001
    """`input ** exponent`; `input` may be a number when `exponent` is a Tensor."""
    if not isinstance(input, Tensor) and isinstance(exponent, Tensor):
        return input**exponent
    return _input(input, "pow") ** exponent


def clamp(input: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return _input(input, "clamp").clamp(min, max)


def clip(input: Any, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return _input(input, "clip").clip(min, max)


def clamp_min(input: Any, min: Any) -> Tensor:  # noqa: A002
    return _input(input, "clamp_min").clamp_min(min)


def maximum(input: Any, other: Any) -> Tensor:
    return _input(input, "maximum").maximum(other)


def minimum(input: Any, other: Any) -> Tensor:
    return _input(input, "minimum").minimum(other)


def masked_fill(input: Any, mask: Any, value: Any) -> Tensor:
    return _input(input, "masked_fill").masked_fill(mask, value)


def isnan(input: Any) -> Tensor:
    """True where the input is NaN (a bool tensor, no gradient)."""
    return Tensor(np.isnan(_input(input, "isnan")._data))


def isinf(input: Any) -> Tensor:
    return Tensor(np.isinf(_input(input, "isinf")._data))


def isfinite(input: Any) -> Tensor:
    return Tensor(np.isfinite(_input(input, "isfinite")._data))


# ------------------------------------------------------------------------- reductions
def sum(input: Any, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A001
    return _input(input, "sum").sum(*args, **kwargs)


def mean(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _input(input, "mean").mean(*args, **kwargs)


def prod(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _input(input, "prod").prod(*args, **kwargs)


def max(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    """As `Tensor.max`: the largest element, `(values, indices)` along `dim`, or `maximum`."""
    return _input(input, "max").max(*args, **kwargs)


def min(input: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: A001
    return _input(input, "min").min(*args, **kwargs)


def amax(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _input(input, "amax").amax(dim, keepdim)


def amin(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _input(input, "amin").amin(dim, keepdim)


def argmax(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _input(input, "argmax").argmax(*args, **kwargs)


def argmin(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _input(input, "argmin").argmin(*args, **kwargs)


def var(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, **kw: Any):
    """torch.var: over `dim` (all by default), with PyTorch's default correction of 1 (so
    `ta.var(x, 1)` is the unbiased variance, where NumPy's `np.var(x, 1)` is not)."""
    correction = _correction(unbiased, kw)
    return _input(input, "var").var(dim=dim, keepdim=keepdim, correction=correction, **kw)


def std(input: Any, dim: Any = None, unbiased: Any = None, keepdim: bool = False, **kw: Any):
    """torch.std: the square root of `var`, with the same arguments and defaults."""
    correction = _correction(unbiased, kw)
    return _input(input, "std").std(dim=dim, keepdim=keepdim, correction=correction, **kw)


def _correction(unbiased: Any, kw: dict) -> int:
    """PyTorch's divisor correction: `correction=` (popped from `kw`), else `unbiased`, else 1."""
    correction = kw.pop("correction", None)
    if correction is not None:
        return correction
    return 1 if unbiased is None else int(bool(unbiased))


def norm(input: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    return _input(input, "norm").norm(p, dim, keepdim)


def cumsum(input: Any, dim: int) -> Tensor:
    return _input(input, "cumsum").cumsum(dim)


def logsumexp(input: Any, dim: Any, keepdim: bool = False) -> Tensor:
    return functional.logsumexp(_input(input, "logsumexp"), dim, keepdim)


def softmax(input: Any, dim: int) -> Tensor:
    return _input(input, "softmax").softmax(dim=dim)


def log_softmax(input: Any, dim: int) -> Tensor:
    return _input(input, "log_softmax").log_softmax(dim=dim)


def sort(input: Any, dim: int = -1, descending: bool = False, stable: bool = False):
    return _input(input, "sort").sort(dim, descending, stable)


def argsort(input: Any, dim: int = -1, descending: bool = False, stable: bool = False):
    return _input(input, "argsort").argsort(dim, descending, stable)


# ------------------------------------------------------------------------ products
def matmul(input: Any, other: Any) -> Tensor:
    return _input(input, "matmul") @ other


def mm(input: Any, mat2: Any) -> Tensor:
    return _input(input, "mm").mm(mat2)


def bmm(input: Any, mat2: Any) -> Tensor:
    """Batched matrix product of (B, N, M) and (B, M, P) tensors (both 3-D, as in PyTorch)."""
    input, mat2 = _input(input, "bmm"), _input(mat2, "bmm")
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise ValueError(
            f"bmm: needs two 3-D tensors with the same batch size, got shapes {input.shape} and "
            f"{mat2.shape}; for other shapes use matmul (which broadcasts)"
        )
    return input @ mat2  # (B, N, P)


def outer(input: Any, vec2: Any) -> Tensor:
    """The outer product of two 1-D tensors: (N,) x (M,) -> (N, M)."""
    input, vec2 = _input(input, "outer"), _input(vec2, "outer")
    if input.ndim != 1 or vec2.ndim != 1:
        raise ValueError(f"outer: needs two 1-D tensors, got shapes {input.shape} and {vec2.shape}")
    return input.unsqueeze(1) * vec2.unsqueeze(0)  # (N, M)


def addmm(input: Any, mat1: Any, mat2: Any, *, beta: float = 1, alpha: float = 1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2)."""
    product = _input(mat1, "addmm").mm(mat2)
    product = product if alpha == 1 else product * alpha
    return product + (input if beta == 1 else input * beta)


def einsum(equation: str, *operands: Any) -> Tensor:
    """`np.einsum`'s notation with gradients (`"bhqd,bhkd->bhqk"`), one `ops.Einsum` node;
    `...` and the implicit output (no `->`) work as in NumPy and PyTorch. An index repeated
    within one operand (a diagonal, "ii->i") is not supported."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])  # torch.einsum(eq, [a, b]) is allowed too
    tensors = [_input(t, "einsum") for t in operands]
    subscripts, result = _einsum_letters(equation.replace(" ", ""), [t.ndim for t in tensors])
    for letters in subscripts:
        repeated = sorted({c for c in letters if letters.count(c) > 1})
        if repeated:
            raise ValueError(
                f"einsum: index {repeated[0]!r} appears twice in one operand of "
                f"{equation!r} (a diagonal), which is not supported; take the diagonal first "
                "(e.g. with indexing) and pass that"
            )
    return ops.Einsum.apply(*tensors, subscripts=tuple(subscripts), result=result)


def _einsum_letters(equation: str, ndims: list[int]) -> tuple[list[str], str]:
    """The equation's operand and output subscripts with each `...` written out as letters
    (aligned from the right, as broadcasting aligns axes)."""
    left, arrow, right = equation.partition("->")
    parts = left.split(",")
    if len(parts) != len(ndims):
        raise ValueError(
            f"einsum: {equation!r} has {len(parts)} operand(s) but {len(ndims)} were given"
        )
    free = [c for c in string.ascii_letters if c not in equation]
    widest = 0
    for i, (part, ndim) in enumerate(zip(parts, ndims)):
        named = len(part.replace("...", ""))
        if "..." in part:
            width = ndim - named
            parts[i] = part.replace("...", "".join(free[len(free) - width :]) if width else "")
            widest = builtins.max(widest, width)  # (`max` here is torch.max)
        if len(parts[i]) != ndim:
            raise ValueError(
                f"einsum: operand {i} has {ndim} axes but {part!r} in {equation!r} names "
                f"{len(parts[i])}"
            )
    ellipsis = "".join(free[len(free) - widest :]) if widest else ""
    if arrow:
        result = right.replace("...", ellipsis)
    else:  # NumPy's implicit output: the broadcast axes, then each letter used once, sorted
        letters = "".join(parts)
        once = sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis)
        result = ellipsis + "".join(once)
    return parts, result


# -------------------------------------------------------------------------- shapes
def transpose(input: Any, dim0: int, dim1: int) -> Tensor:
    return _input(input, "transpose").transpose(dim0, dim1)


def permute(input: Any, dims: Any) -> Tensor:
    return _input(input, "permute").permute(dims)


def reshape(input: Any, shape: Any) -> Tensor:
    return _input(input, "reshape").reshape(shape)


def flatten(input: Any, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return _input(input, "flatten").flatten(start_dim, end_dim)


def squeeze(input: Any, dim: Any = None) -> Tensor:
    return _input(input, "squeeze").squeeze(dim)


def unsqueeze(input: Any, dim: int) -> Tensor:
    return _input(input, "unsqueeze").unsqueeze(dim)


def split(tensor: Any, split_size_or_sections: Any, dim: int = 0) -> tuple:
    return _input(tensor, "split").split(split_size_or_sections, dim)


def chunk(input: Any, chunks: int, dim: int = 0) -> tuple:
    return _input(input, "chunk").chunk(chunks, dim)


def gather(input: Any, dim: int, index: Any) -> Tensor:
    return _input(input, "gather").gather(dim, index)


def flip(input: Any, dims: Any) -> Tensor:
    return _input(input, "flip").flip(dims)


def clone(input: Any) -> Tensor:
    return _input(input, "clone").clone()


# ---------------------------------------------------------------- making and comparing
def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False):
    """A new tensor of `size` (filled with zeros here: never uninitialised memory)."""
    check_device(device)
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    data = np.zeros(shape, dtype=get_default_dtype() if dtype is None else dtype)
    return Tensor(data, requires_grad=requires_grad)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None) -> Tensor:
    check_device(device)
    return Tensor(np.eye(n, m, dtype=get_default_dtype() if dtype is None else dtype))


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None):
    check_device(device)
    dtype = get_default_dtype() if dtype is None else dtype
    return Tensor(np.linspace(start, end, steps, dtype=dtype))


def normal(
    mean: float, std: float, size: Any, dtype: Any = None, *, generator: Generator | None = None
) -> Tensor:
    """Samples of N(mean, std^2) of shape `size` from `generator` or the global generator
    (`manual_seed`)."""
    dtype = get_default_dtype() if dtype is None else dtype
    rng = numpy_generator(generator, "normal")
    return Tensor(rng.normal(mean, std, tuple(size)).astype(dtype))


def randperm(n: int, dtype: Any = np.int64, *, generator: Generator | None = None) -> Tensor:
    """0 .. n-1 in a random order, from `generator` or the global generator (`manual_seed`)."""
    return Tensor(numpy_generator(generator, "randperm").permutation(n).astype(dtype))


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Any) -> int:
    return _input(input, "numel").numel()


def allclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan=False):
    """Whether the values are close (a Python bool, as `torch.allclose`)."""
    a, b = _input(input, "allclose")._data, _input(other, "allclose")._data
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def equal(input: Any, other: Any) -> bool:
    """Whether the two have the same shape and the same values (a Python bool)."""
    a, b = _input(input, "equal")._data, _input(other, "equal")._data
    return a.shape == b.shape and bool((a == b).all())
