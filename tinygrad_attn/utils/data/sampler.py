"""Samplers, as PyTorch's `torch.utils.data`: which indices a `DataLoader` reads, in what order.

`SequentialSampler` gives 0, 1, 2, ...; `RandomSampler` a fresh permutation on every pass (a new
epoch, a new order); `SubsetRandomSampler` a permutation of given indices;
`WeightedRandomSampler` indices drawn by weight; `BatchSampler` groups any of them into lists of
`batch_size`. Random order comes from a `ta.Generator` when one is given, otherwise from the
global generator (`ta.manual_seed`), so a seeded script shuffles the same way on every run (the
orders are NumPy's, not PyTorch's). Samplers never touch the data itself.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import Any, Generic, TypeVar

import numpy as np

from ...creation import multinomial, randint
from ...random import Generator, numpy_generator
from ...torch_functions import randperm

T_co = TypeVar("T_co", covariant=True)

__all__ = [
    "BatchSampler",
    "RandomSampler",
    "Sampler",
    "SequentialSampler",
    "SubsetRandomSampler",
    "WeightedRandomSampler",
]


def _positive_int(value: Any, name: str, owner: str) -> int:
    """`value` if it is an int > 0 (not a bool), else the ValueError PyTorch raises."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{owner}: {name} must be a positive int, got {name}={value!r}")
    return operator.index(value)


class Sampler(Generic[T_co]):
    """The base of every sampler: subclass it and define `__iter__` (and `__len__`, which
    `len(DataLoader)` needs)."""

    def __iter__(self) -> Iterator[T_co]:
        raise NotImplementedError(
            f"{type(self).__name__} is a Sampler without __iter__: define __iter__(self) "
            "yielding indices"
        )


class SequentialSampler(Sampler[int]):
    """0, 1, ..., len(data_source) - 1, the same on every pass."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """Indices of `data_source` in a random order, a new one on every pass.

    Without replacement: a permutation (`num_samples` beyond `len(data_source)` continues with
    further permutations). With `replacement=True`: `num_samples` independent draws. Each pass
    without a `generator` starts a private stream from a seed drawn from the global generator,
    as PyTorch does, so `ta.manual_seed(n)` fixes the sequence of epochs' orders.
    """

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: Generator | None = None,
    ) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(
                f"RandomSampler: replacement must be True or False, got {replacement!r}"
            )
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _positive_int(self.num_samples, "num_samples", "RandomSampler")

    @property
    def num_samples(self) -> int:
        """How many indices a pass yields (`len(data_source)` unless given)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        generator = self.generator
        if generator is None:
            seed = int(numpy_generator(None, "RandomSampler").integers(2**63))
            generator = Generator().manual_seed(seed)
        if self.replacement:
            # in chunks, so a huge num_samples is not drawn all at once
            for start in range(0, self.num_samples, 32):
                count = min(32, self.num_samples - start)
                yield from randint(0, n, (count,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[: self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given `indices` in a random order, a new one on every pass (drawn from `generator`,
    or from the global generator when it is None)."""

    def __init__(self, indices: Sequence[int], generator: Generator | None = None) -> None:
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """`num_samples` indices in [0, len(weights)), index i drawn with probability proportional to
    `weights[i]` (the weights need not sum to 1)."""

    def __init__(
        self,
        weights: Sequence[float],
        num_samples: int,
        replacement: bool = True,
        generator: Generator | None = None,
    ) -> None:
        self.num_samples = _positive_int(num_samples, "num_samples", "WeightedRandomSampler")
        if not isinstance(replacement, bool):
            raise ValueError(
                f"WeightedRandomSampler: replacement must be True or False, got {replacement!r}"
            )
        array = weights.numpy() if hasattr(weights, "numpy") else weights
        self.weights = np.asarray(array, dtype=np.float64)
        if self.weights.ndim != 1:
            raise ValueError(
                f"WeightedRandomSampler: weights must be 1-D (one per sample), got shape "
                f"{self.weights.shape}"
            )
        self.replacement = replacement
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        drawn = multinomial(
            self.weights, self.num_samples, self.replacement, generator=self.generator
        )
        yield from drawn.tolist()

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler[list[int]]):
    """Lists of `batch_size` indices taken in order from `sampler`; the last, shorter list is
    kept unless `drop_last=True`."""

    def __init__(
        self, sampler: Sampler[int] | Iterable[int], batch_size: int, drop_last: bool
    ) -> None:
        self.batch_size = _positive_int(batch_size, "batch_size", "BatchSampler")
        if not isinstance(drop_last, bool):
            raise ValueError(f"BatchSampler: drop_last must be True or False, got {drop_last!r}")
        self.sampler = sampler
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        if self.drop_last:
            return n // self.batch_size
        return -(-n // self.batch_size)  # ceil
