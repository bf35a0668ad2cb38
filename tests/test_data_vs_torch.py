"""tinygrad_attn.utils.data against torch.utils.data itself (skipped without torch): the same
samples through both libraries' default_collate / default_convert, and the same (unshuffled)
DataLoader, BatchSampler and random_split set-ups, must give the same structure, types, dtypes,
shapes and values, and the same error classes. Shuffled orders cannot match (the generators
differ); tests/test_data.py checks those for determinism instead."""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as ta  # noqa: E402
import tinygrad_attn.utils.data  # noqa: E402, F401

Pair = namedtuple("Pair", ["left", "right"])
RNG = np.random.default_rng(0)
X32 = RNG.standard_normal((7, 3)).astype(np.float32)
Y64 = np.arange(7)


def same(ours, theirs, where="batch"):
    """`ours` (tinygrad_attn) has `theirs`' (torch) structure, types, dtypes, shapes, values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ta.Tensor), f"{where}: {type(ours).__name__}, not a Tensor"
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), where
        assert ours.shape == tuple(theirs.shape), where
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=where)
    elif isinstance(theirs, (dict, list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__, f"{where}: {type(ours)}"
        assert len(ours) == len(theirs), where
        if isinstance(theirs, dict):
            assert list(ours) == list(theirs), where
            for key in theirs:
                same(ours[key], theirs[key], f"{where}[{key!r}]")
        else:
            for i, (a, b) in enumerate(zip(ours, theirs)):
                same(a, b, f"{where}[{i}]")
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{where}: {ours!r} != {theirs!r}"


DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _tensors(d):
    return lambda L: [L.tensor(np.ones((2, 3), d)), L.tensor(np.zeros((2, 3), d))]


def _arrays(d):
    return lambda L: [np.arange(4).astype(d)] * 3


def _scalars(d):
    return lambda L: [np.dtype(d).type(1), np.dtype(d).type(0)]


F32 = np.float32
# name: a batch built with library L (torch or tinygrad_attn), for default_collate
BATCHES = {
    **{f"tensors {d}": _tensors(d) for d in DTYPES},
    **{f"arrays {d}": _arrays(d) for d in DTYPES},
    **{f"numpy scalars {d}": _scalars(d) for d in DTYPES},
    "0-d tensors": lambda L: [L.tensor(1.5), L.tensor(2.5)],
    "0-d int tensors": lambda L: [L.tensor(1), L.tensor(2)],
    "0-d arrays": lambda L: [np.array(1.5), np.array(-2.0)],
    "floats": lambda L: [0.5, 1.25, -3.0],
    "ints": lambda L: [1, -2, 3],
    "bools": lambda L: [True, False],
    "int then float": lambda L: [1, 2.5],
    "float then int": lambda L: [1.5, 2],
    "bool then int": lambda L: [True, 2],
    "strings": lambda L: ["a", "bc"],
    "bytes": lambda L: [b"a", b"bc"],
    "tuples": lambda L: [(1, 2.0, "s"), (3, 4.0, "t")],
    "lists": lambda L: [[1, 2], [3, 4], [5, 6]],
    "namedtuples": lambda L: [Pair(1, np.zeros(2)), Pair(2, np.ones(2))],
    "dicts": lambda L: [{"a": 1.0, "b": np.zeros(2, F32)}, {"a": 2.0, "b": np.ones(2, F32)}],
    "ordered dicts": lambda L: [OrderedDict(z=1, a=2), OrderedDict(z=3, a=4)],
    "nested": lambda L: [{"x": (L.tensor(X32[i]), [i, float(i)]), "y": "w"} for i in range(4)],
    "tensor, int, str": lambda L: [(L.tensor(X32[i]), int(Y64[i]), str(i)) for i in range(3)],
    "rows of a float32 tensor": lambda L: list(L.tensor(X32)),
}  # fmt: skip


@pytest.mark.parametrize("name", BATCHES)
def test_default_collate_matches_pytorch(name):
    make = BATCHES[name]
    same(ta.utils.data.default_collate(make(ta)), torch.utils.data.default_collate(make(torch)))


@pytest.mark.parametrize("name", BATCHES)
def test_default_convert_matches_pytorch(name):
    make = BATCHES[name]
    for i, (ours, theirs) in enumerate(zip(make(ta), make(torch))):
        same(
            ta.utils.data.default_convert(ours),
            torch.utils.data.default_convert(theirs),
            f"sample {i}",
        )


BAD_BATCHES = {
    "string arrays": lambda L: [np.array(["a"]), np.array(["b"])],
    "object arrays": lambda L: [np.array([1], dtype=object)] * 2,
    "objects": lambda L: [object()],
    "None": lambda L: [None, None],
    "complex": lambda L: [1j, 2j],
    "lists of different lengths": lambda L: [[1, 2], [3]],
    "tensors of different shapes": lambda L: [L.zeros(2), L.zeros(3)],
    "arrays of different shapes": lambda L: [np.zeros(2), np.zeros(3)],
}


@pytest.mark.parametrize("name", BAD_BATCHES)
def test_default_collate_raises_pytorchs_error_class(name):
    make = BAD_BATCHES[name]
    with pytest.raises(Exception) as theirs:
        torch.utils.data.default_collate(make(torch))
    with pytest.raises(theirs.type):
        ta.utils.data.default_collate(make(ta))


def _iterable(L, n):
    class Stream(L.utils.data.IterableDataset):
        def __iter__(self):
            return iter({"i": i, "v": np.full(2, i, np.float32)} for i in range(n))

    return Stream()


# name: (a dataset built with library L, DataLoader keyword arguments)
LOADERS = {
    "tensor dataset": (lambda L: L.utils.data.TensorDataset(L.tensor(X32), L.tensor(Y64)), {}),
    "list of dicts": (
        lambda L: [{"x": np.full(3, i, np.float64), "y": float(i), "s": str(i)} for i in range(5)],
        {},
    ),
    "list of tuples": (lambda L: [(i, i / 2, f"n{i}") for i in range(6)], {}),
    "list of ints": (lambda L: list(range(9)), {}),
    "concat": (
        lambda L: (
            L.utils.data.TensorDataset(L.tensor(X32[:3]))
            + L.utils.data.TensorDataset(L.tensor(X32[3:]))
        ),
        {},
    ),
    "subset": (
        lambda L: L.utils.data.Subset(
            L.utils.data.TensorDataset(L.tensor(X32), L.tensor(Y64)), [6, 0, 3, 2]
        ),
        {},
    ),
    "reversed by a sampler": (lambda L: list(range(7)), {"sampler": [6, 5, 4, 3, 2, 1, 0]}),
    "iterable": (lambda L: _iterable(L, 7), {}),
}
BATCHING = [
    {"batch_size": 1},
    {"batch_size": 2},
    {"batch_size": 3, "drop_last": True},
    {"batch_size": 4},
    {"batch_size": 7, "drop_last": True},
    {"batch_size": 10},
    {"batch_size": 10, "drop_last": True},
    {"batch_size": None},
]


@pytest.mark.parametrize("batching", BATCHING, ids=str)
@pytest.mark.parametrize("name", LOADERS)
def test_unshuffled_dataloader_gives_pytorchs_batches(name, batching):
    make, options = LOADERS[name]
    ours = ta.utils.data.DataLoader(make(ta), **options, **batching)
    theirs = torch.utils.data.DataLoader(make(torch), **options, **batching)
    same(list(ours), list(theirs))
    same(list(ours), list(theirs), "second epoch")
    if name != "iterable":
        assert len(ours) == len(theirs)


def test_batch_sampler_loader_and_batch_sampler_match_pytorch():
    batches = [[0, 5], [2], [6, 1, 3]]
    ours = ta.utils.data.DataLoader(list(range(10, 17)), batch_sampler=batches)
    theirs = torch.utils.data.DataLoader(list(range(10, 17)), batch_sampler=batches)
    same(list(ours), list(theirs))
    assert len(ours) == len(theirs)
    for n in range(0, 9):
        for size in (1, 2, 3, 5):
            for drop_last in (False, True):
                a = ta.utils.data.BatchSampler(range(n), size, drop_last)
                b = torch.utils.data.BatchSampler(range(n), size, drop_last)
                assert list(a) == list(b) and len(a) == len(b)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 10, 11, 100, 101])
@pytest.mark.parametrize(
    "fractions",
    [[0.5, 0.5], [0.8, 0.2], [0.1, 0.1, 0.8], [1 / 3] * 3, [0.25] * 4, [0.7, 0.2, 0.1], [1.0]],
    ids=str,
)
def test_random_split_lengths_and_warnings_match_pytorch(n, fractions):
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = ta.utils.data.random_split(range(n), fractions)
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = torch.utils.data.random_split(range(n), fractions)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert len(ours_warned) == len(theirs_warned)


@pytest.mark.parametrize(
    "call",
    [
        lambda L: L.utils.data.TensorDataset(L.zeros(3), L.zeros(4)),
        lambda L: L.utils.data.random_split(range(5), [2, 2]),
        lambda L: L.utils.data.ConcatDataset([]),
        lambda L: L.utils.data.ConcatDataset([[1, 2]])[-3],
        lambda L: L.utils.data.ConcatDataset([[1, 2]])[2],
        lambda L: L.utils.data.Dataset()[0],
        lambda L: L.utils.data.DataLoader([1, 2], num_workers=-1),
        lambda L: L.utils.data.DataLoader([1, 2], batch_size=0),
        lambda L: L.utils.data.DataLoader([1, 2], batch_size=None, drop_last=True),
        lambda L: L.utils.data.DataLoader([1, 2], sampler=[0, 1], shuffle=True),
        lambda L: L.utils.data.DataLoader([1, 2], batch_sampler=[[0]], batch_size=2),
        lambda L: L.utils.data.DataLoader(_iterable(L, 2), shuffle=True),
        lambda L: L.utils.data.DataLoader([1, 2], persistent_workers=True),
        lambda L: L.utils.data.DataLoader([], shuffle=True),
        lambda L: L.utils.data.BatchSampler(range(3), 2, drop_last=1),
        lambda L: L.utils.data.RandomSampler(range(3), replacement=1),
    ],
)
def test_errors_have_pytorchs_class(call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type):
        call(ta)
