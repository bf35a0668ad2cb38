"""tinygrad_attn.utils.data (PyTorch's torch.utils.data): datasets, samplers, default_collate and
DataLoader. No PyTorch needed: the dtypes, lengths and errors PyTorch 2.13 gives were read from it
and are written in here (tests/test_data_vs_torch.py compares with it directly when installed)."""

from __future__ import annotations

import warnings
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.utils.data
from tinygrad_attn.utils.data import (
    BatchSampler,
    ChainDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    RandomSampler,
    Sampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    default_collate,
    default_convert,
    get_worker_info,
    random_split,
)

Point = namedtuple("Point", ["x", "y"])


def values(t):
    """A tensor's numbers as nested lists (for readable comparisons)."""
    return t.numpy().tolist()


def xy(n=5):
    """A TensorDataset of n rows: x (n, 2) float32 rows [2i, 2i+1], y (n,) int64 = i."""
    x = ta.tensor(np.arange(2 * n, dtype=np.float32).reshape(n, 2))
    y = ta.tensor(np.arange(n))
    return TensorDataset(x, y)


class Count(IterableDataset):
    """0, 1, ..., n-1 as a stream, of unknown length."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(range(self.n))


class SizedCount(Count):
    """The same stream, with a length."""

    def __len__(self):
        return self.n


# ------------------------------------------------------------------------------- importing
def test_the_module_imports_the_ways_pytorch_code_spells_it():
    import tinygrad_attn as torch

    assert torch.utils.data.DataLoader is DataLoader
    assert tinygrad_attn.utils.data.Dataset is Dataset
    assert get_worker_info() is None  # the main process, as PyTorch says without workers


# -------------------------------------------------------------------------------- datasets
def test_dataset_subclass_needs_getitem_and_adds_into_a_concat_dataset():
    with pytest.raises(NotImplementedError, match="define __getitem__"):
        Dataset()[0]

    class Squares(Dataset):
        def __getitem__(self, i):
            return i * i

        def __len__(self):
            return 3

    joined = Squares() + Squares()
    assert isinstance(joined, ConcatDataset)
    assert [joined[i] for i in range(len(joined))] == [0, 1, 4, 0, 1, 4]
    assert Dataset[int] is not None  # generic, as PyTorch's: `class D(Dataset[Tensor])` works


def test_tensor_dataset_pairs_rows_and_stops_iteration_at_its_end():
    ds = xy(4)
    assert len(ds) == 4
    x2, y2 = ds[2]
    assert values(x2) == [4.0, 5.0] and values(y2) == 2 and y2.dtype == np.int64
    assert len(list(ds)) == 4  # iterating ends with IndexError from the tensors, as in PyTorch
    assert len(TensorDataset(np.zeros((3, 2)))) == 3  # arrays are taken as they are


def test_tensor_dataset_errors():
    with pytest.raises(AssertionError, match=r"size mismatch.*tensor 0: 3, tensor 1: 4"):
        TensorDataset(ta.zeros(3), ta.zeros(4))  # PyTorch's class: AssertionError
    with pytest.raises(IndexError, match="0-d tensor"):
        TensorDataset(ta.tensor(1.0))
    with pytest.raises(TypeError, match="argument 0 is a list, not a tensor"):
        TensorDataset([1, 2])


def test_concat_dataset_indexes_across_its_parts():
    ds = ConcatDataset([[10, 11], [20], [30, 31, 32]])
    assert len(ds) == 6 and ds.cumulative_sizes == [2, 3, 6]
    assert [ds[i] for i in range(6)] == [10, 11, 20, 30, 31, 32]
    assert ds[-1] == 32 and ds[-6] == 10
    with pytest.raises(ValueError, match="index -7 is out of range"):
        ds[-7]  # PyTorch: ValueError for a negative index too far back
    with pytest.raises(IndexError, match="index 6 is out of range"):
        ds[6]
    with pytest.raises(AssertionError, match="no datasets"):
        ConcatDataset([])
    with pytest.raises(AssertionError, match="ChainDataset"):
        ConcatDataset([Count(2)])


def test_iterable_datasets_chain_and_need_iter():
    chained = Count(2) + SizedCount(3)
    assert isinstance(chained, ChainDataset)
    assert list(chained) == [0, 1, 0, 1, 2]
    assert len(ChainDataset([SizedCount(2), SizedCount(3)])) == 5
    with pytest.raises(AssertionError, match="not an IterableDataset"):
        list(ChainDataset([[1, 2]]))
    with pytest.raises(NotImplementedError, match="define __iter__"):
        iter(IterableDataset())


def test_subset_picks_indices_in_order():
    sub = Subset([10, 11, 12, 13], [3, 1])
    assert len(sub) == 2 and sub[0] == 13 and sub[-1] == 11
    assert sub.__getitems__([1, 0]) == [11, 13]
    nested = Subset(Subset(list(range(10)), [9, 8, 7]), [2, 0])
    assert nested.__getitems__([0, 1]) == [7, 9]  # through the inner __getitems__

    class Doubled(Subset):
        def __getitem__(self, i):
            return 2 * super().__getitem__(i)

    with pytest.raises(NotImplementedError, match="define __getitems__"):
        Doubled([1, 2], [0])


# ---------------------------------------------------------------------------- random_split
@pytest.mark.parametrize(
    "n, fractions, lengths, empty_splits",  # lengths and warnings as PyTorch 2.13 gives them
    [
        (5, [0.5, 0.5], [3, 2], 0),
        (10, [0.8, 0.2], [8, 2], 0),
        (7, [0.3, 0.3, 0.4], [3, 2, 2], 0),
        (3, [0.1, 0.1, 0.8], [1, 0, 2], 1),
        (11, [1 / 3, 1 / 3, 1 / 3], [4, 4, 3], 0),
        (2, [0.5, 0.25, 0.25], [2, 0, 0], 2),
    ],
)
def test_random_split_rounds_fractions_as_pytorch(n, fractions, lengths, empty_splits):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        parts = random_split(range(n), fractions)
    assert [len(p) for p in parts] == lengths
    assert len([w for w in caught if "is empty" in str(w.message)]) == empty_splits
    assert sorted(i for p in parts for i in p.indices) == list(range(n))  # a partition


def test_random_split_is_seeded_by_its_generator_or_the_global_one():
    def split(**kw):
        return [p.indices for p in random_split(range(10), [3, 7], **kw)]

    a = split(generator=ta.Generator().manual_seed(0))
    assert a == split(generator=ta.Generator().manual_seed(0))
    assert a != split(generator=ta.Generator().manual_seed(1))
    ta.manual_seed(5)
    b = split()
    ta.manual_seed(5)
    assert split() == b
    assert sorted(b[0] + b[1]) == list(range(10))


def test_random_split_errors():
    with pytest.raises(ValueError, match=r"sum to 4, but the dataset has 5 items"):
        random_split(range(5), [2, 2])
    with pytest.raises(ValueError, match="sum to"):
        random_split(range(5), [0.5, 0.6])
    with pytest.raises(ValueError, match="lengths must be ints >= 0"):
        random_split(range(5), [-1, 6])


# -------------------------------------------------------------------------- default_collate
@pytest.mark.parametrize(
    "batch, dtype, shape",  # the dtypes and shapes PyTorch 2.13's default_collate gives
    [
        ([1.0, 2.5], "float64", (2,)),  # Python floats: float64, not the default dtype
        ([1, 2], "int64", (2,)),
        ([True, False], "bool", (2,)),
        ([1, 2.5], "float32", (2,)),  # an int first: torch.tensor's inference, default dtype
        ([1.5, 2], "float64", (2,)),
        ([np.float32(1), np.float32(2)], "float32", (2,)),
        ([np.float16(1), np.float16(2)], "float16", (2,)),
        ([np.int32(1), np.int32(2)], "int32", (2,)),
        ([np.uint8(1), np.uint8(2)], "uint8", (2,)),
        ([np.int8(1), np.int8(-2)], "int8", (2,)),
        ([np.bool_(True), np.bool_(False)], "bool", (2,)),
        ([np.float64(1.5), np.float64(2)], "float64", (2,)),
        ([np.zeros(3), np.ones(3)], "float64", (2, 3)),
        ([np.zeros((2, 2), np.float32)] * 3, "float32", (3, 2, 2)),
        ([np.arange(3, dtype=np.int32)] * 2, "int32", (2, 3)),
        ([np.array(1.5), np.array(2.5)], "float64", (2,)),
        ([np.arange(3, dtype=np.uint8)] * 2, "uint8", (2, 3)),
        ([np.array([True, False])] * 2, "bool", (2, 2)),
        ([ta.zeros(2), ta.ones(2)], "float32", (2, 2)),
        ([ta.tensor(1), ta.tensor(2)], "int64", (2,)),
    ],
)
def test_default_collate_gives_pytorchs_dtypes(batch, dtype, shape):
    out = default_collate(batch)
    assert isinstance(out, ta.Tensor)
    assert str(out.dtype) == dtype and out.shape == shape
    expected = np.stack([np.asarray(b, dtype=dtype) for b in batch])
    np.testing.assert_array_equal(out.numpy(), expected)


def test_default_collate_copies_the_samples():
    a = np.zeros(2)
    out = default_collate([a, a])
    a[0] = 5.0
    assert values(out) == [[0.0, 0.0], [0.0, 0.0]]


def test_default_collate_keeps_strings_and_transposes_containers():
    assert default_collate(["a", "b"]) == ["a", "b"]
    assert default_collate([b"a", b"b"]) == [b"a", b"b"]
    pairs = default_collate([(1, 2.0), (3, 4.0)])
    assert type(pairs) is list  # tuples give a list, as in PyTorch
    assert values(pairs[0]) == [1, 3] and pairs[1].dtype == np.float64
    rows = default_collate([[1, 2], [3, 4]])
    assert type(rows) is list and [values(r) for r in rows] == [[1, 3], [2, 4]]
    point = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(point) is Point and values(point.x) == [1, 3] and point.y.dtype == np.float64


def test_default_collate_collates_dicts_per_key_and_keeps_their_kind():
    batch = [{"a": 1, "b": np.zeros(2), "s": "x"}, {"a": 2, "b": np.ones(2), "s": "y"}]
    out = default_collate(batch)
    assert type(out) is dict and list(out) == ["a", "b", "s"]
    assert values(out["a"]) == [1, 2] and out["b"].shape == (2, 2) and out["s"] == ["x", "y"]
    ordered = default_collate([OrderedDict(k=1.0), OrderedDict(k=2.0)])
    assert type(ordered) is OrderedDict and values(ordered["k"]) == [1.0, 2.0]
    nested = default_collate([{"p": (ta.zeros(3), [1])}] * 4)
    assert nested["p"][0].shape == (4, 3) and values(nested["p"][1][0]) == [1, 1, 1, 1]


def test_default_collate_errors():
    for batch, what in [
        ([np.array(["a"])], "dtype <U1"),
        ([np.array([1], dtype=object)], "dtype object"),
        ([object()], "type object"),
        ([None], "type NoneType"),
        ([1j], "type complex"),
        ([np.complex64(1)], "dtype complex64"),
    ]:
        with pytest.raises(TypeError, match=f"cannot batch samples of {what}"):
            default_collate(batch)
    with pytest.raises(RuntimeError, match=r"same length, got lengths \[2, 1\]") as info:
        default_collate([[1, 2], [3]])  # RuntimeError, as PyTorch
    assert isinstance(info.value, ValueError)
    for batch in ([ta.zeros(2), ta.zeros(3)], [np.zeros(2), np.zeros(3)]):
        with pytest.raises(RuntimeError, match=r"sample 0 has shape \(2,\), sample 1 has \(3,\)"):
            default_collate(batch)  # RuntimeError, as PyTorch's stack


def test_default_convert_makes_arrays_tensors_and_leaves_numbers():
    a = np.zeros(2)
    t = default_convert(a)
    assert isinstance(t, ta.Tensor) and np.shares_memory(t.numpy(), a)  # as torch.as_tensor
    assert default_convert(1.5) == 1.5 and default_convert("s") == "s"
    scalar = default_convert(np.float32(2))
    assert isinstance(scalar, ta.Tensor) and scalar.shape == () and scalar.dtype == np.float32
    pair = default_convert((np.zeros(1), 2))
    assert type(pair) is list and isinstance(pair[0], ta.Tensor) and pair[1] == 2
    point = default_convert(Point(np.zeros(1), 3))
    assert type(point) is Point and isinstance(point.x, ta.Tensor)
    strings = np.array(["a"])
    assert default_convert(strings) is strings
    assert isinstance(default_convert({"k": np.ones(1)})["k"], ta.Tensor)


# -------------------------------------------------------------------------------- samplers
def test_sequential_and_batch_samplers():
    assert list(SequentialSampler(range(4))) == [0, 1, 2, 3]
    assert len(SequentialSampler(range(4))) == 4
    batches = BatchSampler(SequentialSampler(range(5)), 2, drop_last=False)
    assert list(batches) == [[0, 1], [2, 3], [4]] and len(batches) == 3
    dropped = BatchSampler(range(5), 2, drop_last=True)
    assert list(dropped) == [[0, 1], [2, 3]] and len(dropped) == 2
    assert list(BatchSampler(range(4), 2, drop_last=True)) == [[0, 1], [2, 3]]
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match=f"batch_size must be a positive int, got.*{bad}"):
            BatchSampler(range(3), bad, False)
    with pytest.raises(ValueError, match="drop_last must be True or False"):
        BatchSampler(range(3), 2, 1)
    with pytest.raises(NotImplementedError, match="define __iter__"):
        iter(Sampler())


def test_random_sampler_permutes_anew_each_pass_and_repeats_after_reseeding():
    sampler = RandomSampler(range(8))
    ta.manual_seed(0)
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(8))
    assert first != second  # a new epoch, a new order
    ta.manual_seed(0)
    assert [list(sampler), list(sampler)] == [first, second]
    g = ta.Generator().manual_seed(3)
    with_g = list(RandomSampler(range(8), generator=g))
    assert with_g == list(RandomSampler(range(8), generator=ta.Generator().manual_seed(3)))


def test_random_sampler_num_samples_and_replacement():
    long = list(RandomSampler(range(3), num_samples=7))
    assert len(long) == 7 and sorted(long[:3]) == sorted(long[3:6]) == [0, 1, 2]
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=100))
    assert len(drawn) == 100 and set(drawn) == {0, 1, 2}
    assert len(RandomSampler(range(3), replacement=True, num_samples=100)) == 100
    with pytest.raises(TypeError, match="replacement must be True or False"):
        RandomSampler(range(3), replacement=1)
    with pytest.raises(ValueError, match="num_samples must be a positive int, got num_samples=0"):
        RandomSampler([])  # an empty dataset cannot be shuffled (PyTorch's ValueError)


def test_subset_random_and_weighted_samplers():
    g = ta.Generator().manual_seed(1)
    picked = list(SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(picked) == [10, 20, 30] and len(SubsetRandomSampler([10, 20, 30])) == 3
    weighted = WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=50)
    drawn = list(weighted)
    assert len(drawn) == len(weighted) == 50 and 0 not in drawn and drawn.count(2) > 25
    unique = list(WeightedRandomSampler(ta.tensor([1.0, 1.0, 1.0]), 3, replacement=False))
    assert sorted(unique) == [0, 1, 2]
    with pytest.raises(ValueError, match="weights must be 1-D"):
        WeightedRandomSampler([[1.0]], 1)
    with pytest.raises(ValueError, match="num_samples must be a positive int"):
        WeightedRandomSampler([1.0], 0)
    with pytest.raises(ValueError, match="replacement must be True or False"):
        WeightedRandomSampler([1.0], 1, replacement="yes")


# ------------------------------------------------------------------------------ DataLoader
def test_dataloader_batches_in_order_and_is_reiterable():
    loader = DataLoader(xy(5), batch_size=2)
    batches = [(values(x), values(y)) for x, y in loader]
    assert batches == [
        ([[0.0, 1.0], [2.0, 3.0]], [0, 1]),
        ([[4.0, 5.0], [6.0, 7.0]], [2, 3]),
        ([[8.0, 9.0]], [4]),
    ]
    assert [(values(x), values(y)) for x, y in loader] == batches  # a second epoch
    assert len(loader) == 3
    x0, y0 = next(iter(DataLoader(xy(5))))  # batch_size=1 by default
    assert x0.shape == (1, 2) and x0.dtype == np.float32 and y0.dtype == np.int64


def test_dataloader_drop_last_and_len():
    assert len(DataLoader(xy(5), batch_size=2, drop_last=True)) == 2
    assert [values(y) for _, y in DataLoader(xy(5), batch_size=2, drop_last=True)] == [
        [0, 1],
        [2, 3],
    ]
    assert len(DataLoader(xy(6), batch_size=3)) == 2
    assert len(DataLoader(xy(7), batch_size=3)) == 3
    assert len(DataLoader(xy(5), batch_size=None)) == 5


def test_dataloader_shuffle_is_seeded_by_manual_seed_with_a_new_order_each_epoch():
    loader = DataLoader(xy(10), batch_size=4, shuffle=True)

    def epoch():
        return [i for _, y in loader for i in values(y)]

    ta.manual_seed(0)
    first, second = epoch(), epoch()
    assert sorted(first) == sorted(second) == list(range(10))
    assert first != second and first != list(range(10))
    ta.manual_seed(0)
    assert [epoch(), epoch()] == [first, second]
    ta.manual_seed(1)
    assert epoch() != first


def test_dataloader_shuffle_with_a_generator_leaves_the_global_stream_alone():
    def epoch(generator):
        loader = DataLoader(xy(10), batch_size=3, shuffle=True, generator=generator)
        return [i for _, y in loader for i in values(y)]

    assert epoch(ta.Generator().manual_seed(4)) == epoch(ta.Generator().manual_seed(4))
    assert epoch(ta.Generator().manual_seed(4)) != epoch(ta.Generator().manual_seed(5))
    ta.manual_seed(2)
    expected = ta.randn(3).numpy().copy()
    ta.manual_seed(2)
    epoch(ta.Generator().manual_seed(4))
    np.testing.assert_array_equal(ta.randn(3).numpy(), expected)


def test_dataloader_with_sampler_batch_sampler_and_collate_fn():
    reverse = DataLoader(list(range(5)), batch_size=2, sampler=[4, 3, 2, 1, 0])
    assert [values(b) for b in reverse] == [[4, 3], [2, 1], [0]]
    chosen = DataLoader(list(range(10)), batch_sampler=[[0, 5], [9]])
    assert [values(b) for b in chosen] == [[0, 5], [9]] and len(chosen) == 2
    summed = DataLoader(list(range(6)), batch_size=3, collate_fn=sum)
    assert list(summed) == [3, 12]
    words = DataLoader(["a", "b", "c"], batch_size=2)
    assert list(words) == [["a", "b"], ["c"]]


def test_dataloader_without_batching_converts_each_sample():
    samples = list(DataLoader(xy(3), batch_size=None))
    assert len(samples) == 3 and type(samples[0]) is list  # default_convert: tuple -> list
    assert samples[0][0].shape == (2,)
    assert list(DataLoader([1.5, 2, 3], batch_size=None)) == [1.5, 2, 3]  # numbers stay


def test_dataloader_fetches_a_batch_with_getitems_when_the_dataset_has_it():
    class Logged(Dataset):
        def __init__(self):
            self.calls = []

        def __getitems__(self, indices):
            self.calls.append(list(indices))
            return [float(i) for i in indices]

        def __len__(self):
            return 5

    ds = Logged()
    assert [values(b) for b in DataLoader(ds, batch_size=3)] == [[0.0, 1.0, 2.0], [3.0, 4.0]]
    assert ds.calls == [[0, 1, 2], [3, 4]]


def test_dataloader_batches_an_iterable_dataset():
    assert [values(b) for b in DataLoader(Count(7), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]
    kept = DataLoader(Count(7), batch_size=3, drop_last=True)
    assert [values(b) for b in kept] == [[0, 1, 2], [3, 4, 5]]
    assert [values(b) for b in kept] == [[0, 1, 2], [3, 4, 5]]  # re-iterable
    assert list(DataLoader(Count(3), batch_size=None)) == [0, 1, 2]
    assert len(DataLoader(SizedCount(7), batch_size=3)) == 3
    assert len(DataLoader(SizedCount(7), batch_size=3, drop_last=True)) == 2
    with pytest.raises(TypeError, match="has no __len__"):
        len(DataLoader(Count(7), batch_size=3))
    with pytest.raises(ValueError, match="shuffle=True cannot apply"):
        DataLoader(Count(3), shuffle=True)
    with pytest.raises(ValueError, match="sampler="):
        DataLoader(Count(3), sampler=[0, 1])
    assert list(DataLoader(Count(2), shuffle=False)) is not None  # False is allowed


def test_dataloader_pin_memory_is_accepted_and_changes_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loader = DataLoader(xy(3), batch_size=2, pin_memory=True)
        batches = list(loader)
    assert loader.pin_memory is True
    assert values(batches[0][1]) == [0, 1]


def test_dataloader_refuses_worker_processes_clearly():
    with pytest.raises(ValueError, match=r"num_workers=4\).*main process.*num_workers=0"):
        DataLoader(xy(3), num_workers=4)
    with pytest.raises(ValueError, match="num_workers=-1 is negative"):
        DataLoader(xy(3), num_workers=-1)
    for option in (
        {"prefetch_factor": 2},
        {"persistent_workers": True},
        {"multiprocessing_context": "spawn"},
        {"timeout": 5},
    ):
        with pytest.raises(ValueError, match="worker processes"):
            DataLoader(xy(3), **option)
    assert DataLoader(xy(3), worker_init_fn=print).num_workers == 0  # accepted, never called


def test_dataloader_option_conflicts():
    ds = xy(4)
    with pytest.raises(ValueError, match="sampler= and shuffle=True"):
        DataLoader(ds, sampler=SequentialSampler(ds), shuffle=True)
    for extra in ({"batch_size": 2}, {"shuffle": True}, {"drop_last": True}, {"sampler": [0]}):
        with pytest.raises(ValueError, match="batch_sampler= already decides"):
            DataLoader(ds, batch_sampler=[[0, 1]], **extra)
    with pytest.raises(ValueError, match="batch_size=None .* drop_last"):
        DataLoader(ds, batch_size=None, drop_last=True)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="batch_size must be a positive int"):
        DataLoader(Count(3), batch_size=0)
    loader = DataLoader(ds, batch_size=2)
    with pytest.raises(ValueError, match="batch_size cannot be changed"):
        loader.batch_size = 3
    loader.collate_fn = list  # PyTorch lets this one change, and so do we
    assert len(next(iter(loader))) == 2
