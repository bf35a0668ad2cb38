"""PyTorch's `torch.*` comparison and logic functions (`torch.eq(a, b)`, `torch.any(mask)`,
`torch.nonzero(x)`): each calls the Tensor method of the same name on its first argument, so
both spellings behave alike. The results are bool (or index) tensors and take no gradient,
except `masked_select`'s, which is differentiable in its input.
"""

from __future__ import annotations

from typing import Any

from .tensor import Tensor
from .torch_functions import _input

__all__ = [
    "all", "any", "bitwise_and", "count_nonzero", "eq", "ge", "gt", "isclose", "le",
    "logical_and", "logical_not", "logical_or", "logical_xor", "lt", "masked_select", "ne",
    "nonzero",
]  # fmt: skip


def eq(input: Any, other: Any) -> Tensor:
    return _input(input, "eq").eq(other)


def ne(input: Any, other: Any) -> Tensor:
    return _input(input, "ne").ne(other)


def lt(input: Any, other: Any) -> Tensor:
    return _input(input, "lt").lt(other)


def le(input: Any, other: Any) -> Tensor:
    return _input(input, "le").le(other)


def gt(input: Any, other: Any) -> Tensor:
    return _input(input, "gt").gt(other)


def ge(input: Any, other: Any) -> Tensor:
    return _input(input, "ge").ge(other)


def isclose(input: Any, other: Any, rtol: float = 1e-5, atol: float = 1e-8, equal_nan=False):
    return _input(input, "isclose").isclose(other, rtol, atol, equal_nan)


def logical_and(input: Any, other: Any) -> Tensor:
    return _input(input, "logical_and").logical_and(other)


def logical_or(input: Any, other: Any) -> Tensor:
    return _input(input, "logical_or").logical_or(other)


def logical_xor(input: Any, other: Any) -> Tensor:
    return _input(input, "logical_xor").logical_xor(other)


def logical_not(input: Any) -> Tensor:
    return _input(input, "logical_not").logical_not()


def bitwise_and(input: Any, other: Any) -> Tensor:
    return _input(input, "bitwise_and").bitwise_and(other)


def any(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _input(input, "any").any(dim, keepdim)


def all(input: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    return _input(input, "all").all(dim, keepdim)


def count_nonzero(input: Any, dim: Any = None) -> Tensor:
    return _input(input, "count_nonzero").count_nonzero(dim)


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:
    return _input(input, "nonzero").nonzero(as_tuple=as_tuple)


def masked_select(input: Any, mask: Any) -> Tensor:
    return _input(input, "masked_select").masked_select(mask)
