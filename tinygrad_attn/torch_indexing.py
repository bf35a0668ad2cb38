"""PyTorch's `torch.*` functions that select, move or repeat elements (`torch.roll(x, 1)`,
`torch.index_select(x, 0, i)`, `torch.unbind(x)`): each calls the Tensor method of the same
name on its first argument, so both spellings behave alike (views where the method gives one,
gradients through the method's op).
"""

from __future__ import annotations

from typing import Any

from .tensor import Tensor
from .torch_functions import _input

__all__ = [
    "broadcast_to", "diagonal", "index_select", "movedim", "narrow", "repeat_interleave",
    "roll", "scatter", "select", "swapaxes", "unbind",
]  # fmt: skip


def roll(input: Any, shifts: Any, dims: Any = None) -> Tensor:
    return _input(input, "roll").roll(shifts, dims)


def diagonal(input: Any, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _input(input, "diagonal").diagonal(offset, dim1, dim2)


def unbind(input: Any, dim: int = 0) -> tuple:
    return _input(input, "unbind").unbind(dim)


def index_select(input: Any, dim: int, index: Any) -> Tensor:
    return _input(input, "index_select").index_select(dim, index)


def scatter(input: Any, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce=None):
    return _input(input, "scatter").scatter(dim, index, src, value=value, reduce=reduce)


def movedim(input: Any, source: Any, destination: Any) -> Tensor:
    return _input(input, "movedim").movedim(source, destination)


def swapaxes(input: Any, axis0: int, axis1: int) -> Tensor:
    return _input(input, "swapaxes").swapaxes(axis0, axis1)


def narrow(input: Any, dim: int, start: int, length: int) -> Tensor:
    return _input(input, "narrow").narrow(dim, start, length)


def select(input: Any, dim: int, index: int) -> Tensor:
    return _input(input, "select").select(dim, index)


def repeat_interleave(input: Any, repeats: Any, dim: int | None = None) -> Tensor:
    return _input(input, "repeat_interleave").repeat_interleave(repeats, dim)


def broadcast_to(input: Any, size: Any) -> Tensor:
    return _input(input, "broadcast_to").broadcast_to(size)
