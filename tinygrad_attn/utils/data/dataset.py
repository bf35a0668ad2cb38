"""Datasets, as PyTorch's `torch.utils.data`: what a `DataLoader` reads samples from.

A map-style `Dataset` answers `dataset[i]` (and usually `len(dataset)`); an `IterableDataset`
is read front to back with `iter(dataset)`. `TensorDataset` pairs tensors row by row,
`ConcatDataset` / `ChainDataset` join datasets end to end, `Subset` picks indices, and
`random_split` cuts a dataset into random, non-overlapping `Subset`s.

Datasets only hand out samples: turning samples into batches is collate.py's job, choosing which
samples and in what order is sampler.py's. Nothing here records a graph of its own (indexing a
tensor that requires grad records what indexing always records).
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Generic, TypeVar

from ...random import Generator
from ...torch_functions import randperm

T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "ChainDataset",
    "ConcatDataset",
    "Dataset",
    "IterableDataset",
    "Subset",
    "TensorDataset",
    "random_split",
]


class Dataset(Generic[T_co]):
    """A map-style dataset: subclass it and define `__getitem__(i)` (and `__len__`, which
    `DataLoader`'s default samplers need). `a + b` is `ConcatDataset([a, b])`."""

    def __getitem__(self, index: Any) -> T_co:
        raise NotImplementedError(
            f"{type(self).__name__} is a Dataset without __getitem__: define "
            "__getitem__(self, index) returning one sample (and __len__)"
        )

    def __add__(self, other: Dataset[T_co]) -> ConcatDataset[T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """A dataset read as a stream: subclass it and define `__iter__`. `DataLoader` batches
    consecutive samples and cannot shuffle it. `a + b` is `ChainDataset([a, b])`."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(
            f"{type(self).__name__} is an IterableDataset without __iter__: define "
            "__iter__(self) yielding the samples"
        )

    def __add__(self, other: Dataset[T_co]) -> ChainDataset:  # type: ignore[override]
        return ChainDataset([self, other])


def _first_dim(t: Any, position: int) -> int:
    """The number of rows (length of axis 0) of TensorDataset's argument number `position`."""
    shape = getattr(t, "shape", None)
    if shape is None:
        raise TypeError(
            f"TensorDataset: argument {position} is a {type(t).__name__}, not a tensor; "
            "wrap it with ta.tensor(...)"
        )
    if len(shape) == 0:
        raise IndexError(
            f"TensorDataset: argument {position} is a 0-d tensor, which has no rows; "
            "every tensor needs a first dimension with one entry per sample"
        )
    return int(shape[0])


class TensorDataset(Dataset[tuple]):
    """Samples made of tensors sharing their first dimension: item `i` is
    `(tensors[0][i], tensors[1][i], ...)`, as `torch.utils.data.TensorDataset`."""

    def __init__(self, *tensors: Any) -> None:
        rows = [_first_dim(t, i) for i, t in enumerate(tensors)]
        if any(n != rows[0] for n in rows):
            sizes = ", ".join(f"tensor {i}: {n}" for i, n in enumerate(rows))
            # AssertionError, as PyTorch raises for this mistake
            raise AssertionError(
                f"TensorDataset: size mismatch between tensors: their first dimensions differ "
                f"({sizes}); every tensor must have one row per sample"
            )
        self.tensors = tensors

    def __getitem__(self, index: Any) -> tuple:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        if not self.tensors:
            raise IndexError("len(TensorDataset()): it was given no tensors, so it has no rows")
        return _first_dim(self.tensors[0], 0)


class ConcatDataset(Dataset[T_co]):
    """Map-style datasets one after the other: index `len(a)` is `b[0]`."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        # AssertionErrors, as PyTorch raises for these mistakes
        if not self.datasets:
            raise AssertionError("ConcatDataset: got no datasets; pass a non-empty list")
        for i, d in enumerate(self.datasets):
            if isinstance(d, IterableDataset):
                raise AssertionError(
                    f"ConcatDataset: dataset {i} is an IterableDataset ({type(d).__name__}), "
                    "which has no indices; join iterable datasets with ChainDataset"
                )
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int) -> T_co:
        if idx < 0:
            if -idx > len(self):
                raise ValueError(
                    f"ConcatDataset: index {idx} is out of range for a dataset of {len(self)}"
                )
            idx += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, idx)  # the dataset holding idx
        if which == len(self.datasets):
            raise IndexError(
                f"ConcatDataset: index {idx} is out of range for a dataset of {len(self)}"
            )
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


class ChainDataset(IterableDataset):
    """Iterable datasets read one after the other (built lazily: each is iterated when reached)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = datasets

    def _checked(self) -> Iterator[IterableDataset]:
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                # AssertionError, as PyTorch raises for this mistake
                raise AssertionError(
                    f"ChainDataset: {type(d).__name__} is not an IterableDataset; join "
                    "map-style datasets with ConcatDataset"
                )
            yield d

    def __iter__(self) -> Iterator:
        for d in self._checked():
            yield from d

    def __len__(self) -> int:
        return sum(len(d) for d in self._checked())  # type: ignore[arg-type]


class Subset(Dataset[T_co]):
    """The samples of `dataset` at `indices`, in that order: `Subset(ds, [3, 1])[0] is ds[3]`."""

    def __init__(self, dataset: Dataset[T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        # DataLoader fetches a batch with __getitems__; a subclass that changes one sample's
        # lookup only would be bypassed silently (PyTorch refuses it too).
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__, which DataLoader "
                "uses to fetch a batch; define __getitems__(self, indices) too, e.g. "
                "`return [self[i] for i in indices]`"
            )

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        """The samples at positions `indices` (DataLoader fetches a batch with this)."""
        picked = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(picked)  # type: ignore[attr-defined]
        return [self.dataset[i] for i in picked]

    def __len__(self) -> int:
        return len(self.indices)


def _lengths_from_fractions(fractions: Sequence[float], total: int) -> list[int]:
    """PyTorch's rule: floor(total * f) each, then the left-over items one at a time to the
    splits in order (first, second, ...), so [0.5, 0.5] of 5 gives [3, 2]."""
    lengths = []
    for i, fraction in enumerate(fractions):
        if not 0 <= fraction <= 1:
            raise ValueError(f"random_split: fraction {fraction} at index {i} is not in [0, 1]")
        lengths.append(math.floor(total * fraction))
    for i in range(total - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, n in enumerate(lengths):
        if n == 0:
            warnings.warn(
                f"random_split: split {i} is empty ({fractions[i]} of {total} items)",
                UserWarning,
                stacklevel=3,
            )
    return lengths


def random_split(
    dataset: Dataset, lengths: Sequence[int | float], generator: Generator | None = None
) -> list[Subset]:
    """Cut `dataset` into non-overlapping random `Subset`s of the given `lengths`: ints that sum
    to `len(dataset)`, or fractions that sum to 1 (`[0.8, 0.2]`). The permutation comes from
    `generator`, or from the global generator (`ta.manual_seed`) when it is None."""
    total = len(dataset)  # type: ignore[arg-type]
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, total)
    if sum(lengths) != total:
        raise ValueError(
            f"random_split: lengths {list(lengths)} sum to {sum(lengths)}, but the dataset has "
            f"{total} items; give lengths that sum to {total}, or fractions that sum to 1"
        )
    if any(n < 0 or n != int(n) for n in lengths):
        raise ValueError(
            f"random_split: lengths must be ints >= 0 or fractions summing to 1, got {lengths}"
        )
    order = randperm(total, generator=generator).tolist()
    ends = itertools.accumulate(int(n) for n in lengths)
    return [Subset(dataset, order[end - int(n) : end]) for end, n in zip(ends, lengths)]
