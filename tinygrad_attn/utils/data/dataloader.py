"""`DataLoader`, as PyTorch's: batches from a dataset, one list of samples at a time.

For a map-style dataset it asks its batch sampler for a list of indices, fetches those samples
(with the dataset's `__getitems__` when it has one) and hands the list to `collate_fn`
(`default_collate` unless given). For an `IterableDataset` it takes `batch_size` consecutive
samples. With `batch_size=None` each sample is passed through `collate_fn` (`default_convert`)
unbatched. Every `iter(loader)` is a new pass: a shuffling loader gives a new order per epoch.

What differs from PyTorch, on purpose: everything runs in the calling process, so
`num_workers > 0` (and the options that only make sense with workers) is a clear error;
`pin_memory=True` is accepted and does nothing, because tensors here live in ordinary CPU
memory, which is what pinning would give; starting a pass does not draw a worker seed from the
global generator (there are no workers to seed). This module never decides an order (sampler.py)
or how samples combine (collate.py).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from ...random import Generator
from .collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

T_co = TypeVar("T_co", covariant=True)

__all__ = ["DataLoader", "get_worker_info"]

# what cannot change once a DataLoader is made (its length and batches depend on them)
_FIXED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


def get_worker_info() -> None:
    """None: there are no worker processes, so code runs in the main process (PyTorch's answer
    there too)."""
    return None


def _check_main_process_only(
    num_workers: int,
    timeout: float,
    prefetch_factor: int | None,
    persistent_workers: bool,
    multiprocessing_context: Any,
) -> None:
    """The options that ask for worker processes, refused with what to do instead."""
    if num_workers < 0:
        raise ValueError(
            f"DataLoader: num_workers={num_workers} is negative; use num_workers=0 (the default)"
        )
    if num_workers > 0:
        raise ValueError(
            f"DataLoader(num_workers={num_workers}): tinygrad_attn loads batches in the main "
            "process only (no worker processes); pass num_workers=0, the default"
        )
    if timeout < 0:
        raise ValueError(f"DataLoader: timeout={timeout} is negative; leave it at 0")
    if timeout > 0:
        raise ValueError(
            f"DataLoader(timeout={timeout}): a timeout applies to worker processes, and batches "
            "are loaded in the main process here; leave timeout at 0"
        )
    for name, given in (
        ("prefetch_factor", prefetch_factor is not None),
        ("persistent_workers", bool(persistent_workers)),
        ("multiprocessing_context", multiprocessing_context is not None),
    ):
        if given:
            raise ValueError(
                f"DataLoader({name}=...) only applies to worker processes (num_workers > 0), "
                f"and batches are loaded in the main process here; leave {name} out"
            )


class DataLoader(Generic[T_co]):
    """Batches of samples from `dataset`, as `torch.utils.data.DataLoader`.

    `for xb, yb in DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True): ...`

    - `shuffle=True` draws a new order for every pass, from `generator` or the global generator
      (`ta.manual_seed`); `sampler=` or `batch_sampler=` choose the indices instead;
    - `drop_last=True` leaves out a last, smaller batch; `len(loader)` counts batches;
    - `collate_fn` turns a list of samples into a batch (`default_collate` by default);
    - `num_workers` must be 0 and `pin_memory` is accepted and ignored (see the module notes).
    """

    def __init__(
        self,
        dataset: Dataset[T_co],
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Sampler | Iterable | None = None,
        batch_sampler: Sampler[list] | Iterable[list] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list], Any] | None = None,
        pin_memory: bool = False,
        drop_last: bool = False,
        timeout: float = 0,
        worker_init_fn: Callable[[int], None] | None = None,
        multiprocessing_context: Any = None,
        generator: Generator | None = None,
        *,
        prefetch_factor: int | None = None,
        persistent_workers: bool = False,
        pin_memory_device: str = "",
        in_order: bool = True,
    ) -> None:
        _check_main_process_only(
            num_workers, timeout, prefetch_factor, persistent_workers, multiprocessing_context
        )
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            for name, value in (
                ("shuffle", shuffle if shuffle else None),
                ("sampler", sampler),
                ("batch_sampler", batch_sampler),
            ):
                if value is not None:
                    raise ValueError(
                        f"DataLoader: an IterableDataset is read in its own order, so "
                        f"{name}={value!r} cannot apply; leave {name} out (shuffle inside the "
                        "dataset's __iter__ if needed)"
                    )
        shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError(
                "DataLoader: sampler= and shuffle=True both choose the order; pass one of them "
                "(RandomSampler(dataset) as the sampler shuffles)"
            )
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "DataLoader: batch_sampler= already decides the batches, so batch_size, "
                    "shuffle, sampler and drop_last must be left at their defaults"
                )
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError(
                "DataLoader: batch_size=None loads samples one at a time, unbatched, so "
                "drop_last=True has nothing to drop; leave drop_last out"
            )
        if sampler is None and not iterable:
            if shuffle:
                sampler = RandomSampler(dataset, generator=generator)  # type: ignore[arg-type]
            else:
                sampler = SequentialSampler(dataset)  # type: ignore[arg-type]
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)  # type: ignore[arg-type]
        if iterable and batch_size is not None:
            BatchSampler([], batch_size, drop_last)  # the same checks of batch_size, drop_last
        auto_collation = batch_sampler is not None or (iterable and batch_size is not None)
        if collate_fn is None:
            collate_fn = default_collate if auto_collation else default_convert

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler  # None for an IterableDataset, which is read in its own order
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.collate_fn = collate_fn
        self.pin_memory = pin_memory  # accepted, ignored: see the module docstring
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn  # never called: there are no workers
        self.multiprocessing_context = multiprocessing_context
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._auto_collation = auto_collation
        self._initialized = True

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _FIXED and self.__dict__.get("_initialized", False):
            raise ValueError(
                f"DataLoader: {name} cannot be changed after the DataLoader is made (its length "
                "and batches depend on it); make a new DataLoader"
            )
        super().__setattr__(name, value)

    def __iter__(self) -> Iterator[Any]:
        """A new pass over the data (a new order when shuffling)."""
        if isinstance(self.dataset, IterableDataset):
            return self._iterable_batches()
        return self._map_batches()

    def _map_batches(self) -> Iterator[Any]:
        if not self._auto_collation:  # batch_size=None: one sample at a time
            for index in self.sampler:  # type: ignore[union-attr]
                yield self.collate_fn(self.dataset[index])
            return
        fetch_many = getattr(self.dataset, "__getitems__", None)
        for indices in self.batch_sampler:  # type: ignore[union-attr]
            if callable(fetch_many):
                samples = fetch_many(indices)
            else:
                samples = [self.dataset[i] for i in indices]
            yield self.collate_fn(samples)

    def _iterable_batches(self) -> Iterator[Any]:
        samples = iter(self.dataset)  # type: ignore[call-overload]
        if not self._auto_collation:
            for sample in samples:
                yield self.collate_fn(sample)
            return
        while batch := list(itertools.islice(samples, self.batch_size)):
            if self.drop_last and len(batch) < self.batch_size:  # type: ignore[operator]
                return
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        """The number of batches in a pass (of samples, with `batch_size=None`)."""
        if isinstance(self.dataset, IterableDataset):
            if not hasattr(self.dataset, "__len__"):
                raise TypeError(
                    f"len(DataLoader): the IterableDataset {type(self.dataset).__name__} has no "
                    "__len__, so the number of batches is unknown until it is read"
                )
            n = len(self.dataset)  # type: ignore[arg-type]
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self._auto_collation:
            return len(self.batch_sampler)  # type: ignore[arg-type]
        return len(self.sampler)  # type: ignore[arg-type]
