"""Turning a list of samples into one batch: `default_collate` (and `default_convert`, its
one-sample form), with PyTorch's rules, decided by the type of the FIRST sample:

- a Tensor: the samples stacked on a new first axis (`ta.stack(batch, 0)`);
- a NumPy array: converted to tensors, then stacked (dtype kept; string/object arrays refused);
- a NumPy scalar (`np.float32(1.5)`): a 1-D tensor of that dtype;
- a Python float: a float64 tensor (not the default dtype: PyTorch's rule, kept);
- a Python int or bool: `ta.tensor(batch)` (int64, bool, or the default float dtype if a later
  sample is a float);
- a str or bytes: the batch itself, a list of strings;
- a dict (any Mapping): the same kind of mapping, each key collated over the samples;
- a namedtuple: the same namedtuple, each field collated;
- a tuple or list: transposed and each position collated; a tuple gives a LIST (PyTorch's
  rule), a list a list.

This module only arranges samples; it reads no dataset and chooses no order (dataset.py and
sampler.py do).
"""

from __future__ import annotations

import collections.abc
import copy
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...creation import from_numpy, stack, tensor
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

# dtype kinds a tensor holds: float, signed and unsigned int, bool
_NUMBER_KINDS = "fiub"


class _CollateShapeError(ValueError, RuntimeError):
    """Samples whose shapes or lengths differ (PyTorch raises RuntimeError; it is a wrong
    value, a ValueError here, so both `except` clauses catch it)."""


def _refuse(what: Any) -> TypeError:
    return TypeError(
        f"default_collate: cannot batch samples of {what}; it batches tensors, NumPy arrays, "
        "numbers, strings, and dicts, lists or tuples of those. Pass DataLoader(collate_fn=...) "
        "to batch anything else."
    )


def _same_shapes(shapes: list[tuple], what: str) -> None:
    for i, shape in enumerate(shapes):
        if shape != shapes[0]:
            raise _CollateShapeError(
                f"default_collate: {what} of different shapes cannot be stacked: sample 0 has "
                f"shape {shapes[0]}, sample {i} has {shape}. Make the samples one shape (pad or "
                "crop), or pass DataLoader(collate_fn=...)"
            )


def _stack_tensors(batch: Sequence[Tensor]) -> Tensor:
    _same_shapes([tuple(t.shape) for t in batch], "tensors")
    return stack(list(batch), 0)  # (B, *sample_shape)


def _as_tensor(array: np.ndarray) -> Tensor:
    """`array` as a tensor sharing its memory; arrays of strings, objects, complex numbers or
    dates are refused."""
    if array.dtype.kind not in _NUMBER_KINDS:
        raise _refuse(f"dtype {array.dtype}")
    return from_numpy(array)


def _stack_arrays(batch: Sequence[np.ndarray]) -> Tensor:
    _as_tensor(batch[0])  # refuses a string or object array before comparing shapes
    _same_shapes([a.shape for a in batch], "NumPy arrays")
    return _stack_tensors([_as_tensor(np.asarray(a)) for a in batch])


def _collate_mapping(elem: collections.abc.Mapping, fields: dict) -> Any:
    """A mapping of `elem`'s kind holding `fields`: a copy of `elem` updated, for a mutable
    mapping (an OrderedDict stays one); else the type built from a dict; else a plain dict."""
    try:
        if isinstance(elem, collections.abc.MutableMapping):
            out = copy.copy(elem)
            out.update(fields)
            return out
        return type(elem)(fields)
    except TypeError:
        return fields


def _collate_sequence(elem: Sequence, items: list) -> Any:
    """A sequence of `elem`'s kind holding `items` (a list when that kind cannot be rebuilt)."""
    try:
        if isinstance(elem, collections.abc.MutableSequence):
            out = copy.copy(elem)
            for i, item in enumerate(items):
                out[i] = item
            return out
        return type(elem)(items)
    except TypeError:
        return items


def default_collate(batch: Sequence[Any]) -> Any:
    """Put a list of samples together into one batch, as `torch.utils.data.default_collate`
    (see the module docstring for the rules; `DataLoader` calls it on each list of samples)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray):
        return _stack_arrays(batch)
    if isinstance(elem, (np.bool_, np.number)):  # before float: np.float64 is a float
        return _as_tensor(np.array(batch))  # (B,) of the scalars' dtype
    if isinstance(elem, float):
        return tensor(batch, dtype=np.float64)  # (B,) float64, PyTorch's rule for floats
    if isinstance(elem, int):  # bool is an int
        return tensor(batch)  # (B,)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        fields = {key: default_collate([sample[key] for sample in batch]) for key in elem}
        return _collate_mapping(elem, fields)
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(column) for column in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        lengths = [len(sample) for sample in batch]
        if any(n != lengths[0] for n in lengths):
            raise _CollateShapeError(
                f"default_collate: samples that are lists or tuples must all have the same "
                f"length, got lengths {lengths}; pad them, or pass DataLoader(collate_fn=...)"
            )
        columns = [default_collate(column) for column in zip(*batch)]
        if isinstance(elem, tuple):
            return columns  # a list, as PyTorch gives
        return _collate_sequence(elem, columns)
    raise _refuse(f"type {type(elem).__name__}")


def default_convert(data: Any) -> Any:
    """One sample with its NumPy arrays and scalars made tensors (sharing the arrays' memory),
    inside dicts, lists and tuples too; anything else is returned as it is. `DataLoader` uses
    it instead of `default_collate` when `batch_size=None` (no batching)."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return from_numpy(data) if data.dtype.kind in _NUMBER_KINDS else data
    if isinstance(data, (np.bool_, np.number)):
        array = np.asarray(data)  # 0-d, the scalar's dtype
        return from_numpy(array) if array.dtype.kind in _NUMBER_KINDS else data
    if isinstance(data, collections.abc.Mapping):
        return _collate_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]  # a list, as PyTorch gives
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _collate_sequence(data, [default_convert(d) for d in data])
    return data
