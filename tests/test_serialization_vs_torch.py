"""ta.save / ta.load against PyTorch itself: files written here read by
`torch.load(weights_only=True)`, files written by `torch.save` read here, the same objects
written byte for byte as PyTorch writes them, and a model trained on each side giving the same
outputs on the other. Skipped where torch is not installed (it is never a dependency)."""

from __future__ import annotations

import collections
import importlib.util
import io
import struct
import zipfile
import zlib
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as ta  # noqa: E402
import tinygrad_attn.nn as nn  # noqa: E402
from tinygrad_attn.serialization import SerializationError, zip_archive  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"

DTYPE_PAIRS = [
    (np.float16, torch.float16),
    (np.float32, torch.float32),
    (np.float64, torch.float64),
    (np.int8, torch.int8),
    (np.int16, torch.int16),
    (np.int32, torch.int32),
    (np.int64, torch.int64),
    (np.uint8, torch.uint8),
    (np.bool_, torch.bool),
    (np.uint16, torch.uint16),
    (np.uint32, torch.uint32),
    (np.uint64, torch.uint64),
]


def ours_to_torch(obj, **load_args):
    buffer = io.BytesIO()
    ta.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True, **load_args)


def torch_to_ours(obj, **load_args):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return ta.load(buffer, **load_args)


def values(n: int, dtype) -> np.ndarray:
    array = np.arange(n) * 37 % 101
    if np.dtype(dtype).kind == "f":
        return (array / 7 - 5).astype(dtype)
    if np.dtype(dtype).kind == "b":
        return array % 3 == 0
    return array.astype(dtype)


def same_storage(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


# ------------------------------------------------------------------------------ dtypes
@pytest.mark.parametrize("np_dtype, torch_dtype", DTYPE_PAIRS, ids=lambda d: str(d))
def test_every_dtype_goes_both_ways(np_dtype, torch_dtype):
    array = values(12, np_dtype).reshape(3, 4)
    theirs = ours_to_torch({"t": ta.from_numpy(array), "s": ta.from_numpy(array[1, 2, ...])})
    assert theirs["t"].dtype == torch_dtype and theirs["t"].shape == (3, 4)
    assert np.array_equal(theirs["t"].numpy(), array)
    assert theirs["s"].shape == () and theirs["s"].item() == array[1, 2].item()
    ours = torch_to_ours(
        {"t": torch.from_numpy(array.copy()), "e": torch.empty(0, 2, dtype=torch_dtype)}
    )
    assert ours["t"].dtype == array.dtype and np.array_equal(ours["t"].numpy(), array)
    assert ours["e"].shape == (0, 2) and ours["e"].dtype == array.dtype


# ------------------------------------------------------------------------------ byte for byte
def _paired_objects():
    """(ours, theirs) pairs that must give the same file."""
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    tb = torch.from_numpy(base.copy())
    yield "views", (
        collections.OrderedDict(w=ta.from_numpy(base), row=ta.from_numpy(base[1]),
                                cols=ta.from_numpy(base[:, 1:3]), t=ta.from_numpy(base.T)),
        collections.OrderedDict(w=tb, row=tb[1], cols=tb[:, 1:3], t=tb.t()),
    )  # fmt: skip
    yield (
        "dtypes",
        (
            {str(np.dtype(n)): ta.from_numpy(values(5, n)) for n, _ in DTYPE_PAIRS},
            {str(np.dtype(n)): torch.from_numpy(values(5, n)) for n, _ in DTYPE_PAIRS},
        ),
    )
    yield (
        "parameter",
        (
            # (nn.Parameter copies its data, torch.nn.Parameter shares it: give each its own)
            {"p": nn.Parameter(base), "frozen": nn.Parameter(base[0], requires_grad=False)},
            {
                "p": torch.nn.Parameter(tb.clone()),
                "frozen": torch.nn.Parameter(tb[0].clone(), requires_grad=False),
            },
        ),
    )
    yield (
        "0-d and empty",
        (
            [ta.tensor(1.5), ta.zeros(0, 3), ta.tensor(np.int64(4))],
            [torch.tensor(1.5), torch.zeros(0, 3), torch.tensor(4)],
        ),
    )
    plain = {"lr": 0.001, "betas": (0.9, 0.999), "name": "x", "none": None, "flag": True,
             "ints": [1, -2, 2**40], "nested": {"a": [{"b": ()}]}, "bytes": b"\x00\xff",
             "set": {1, 2}}  # fmt: skip
    yield (
        "plain values",
        (
            {**plain, "dtype": ta.float32, "long": ta.long, "device": ta.device("cpu")},
            {**plain, "dtype": torch.float32, "long": torch.long, "device": torch.device("cpu")},
        ),
    )
    yield "optimizer-like", (
        {"state": {0: {"step": ta.tensor(3.0), "exp_avg": ta.from_numpy(base)}},
         "param_groups": [{"lr": 0.1, "params": [0]}]},
        {"state": {0: {"step": torch.tensor(3.0), "exp_avg": tb}},
         "param_groups": [{"lr": 0.1, "params": [0]}]},
    )  # fmt: skip


PAIRS = list(_paired_objects())


@pytest.mark.parametrize("ours, theirs", [p for _, p in PAIRS], ids=[n for n, _ in PAIRS])
def test_the_same_objects_give_pytorchs_bytes(tmp_path, ours, theirs):
    (tmp_path / "ours").mkdir()
    (tmp_path / "theirs").mkdir()
    ta.save(ours, tmp_path / "ours" / "file.pt")
    torch.save(theirs, tmp_path / "theirs" / "file.pt")
    a = (tmp_path / "ours" / "file.pt").read_bytes()
    b = (tmp_path / "theirs" / "file.pt").read_bytes()
    assert _without_id_hash(a) == _without_id_hash(b)
    assert a != b  # (only the serialization id's first half differs; see zip_archive.py)


def _without_id_hash(data: bytes) -> bytes:
    """`data` with the first half of its serialization id blanked (PyTorch hashes the record
    names with the C++ library's string hash there, not reproducible here), and with it the
    id record's CRC, in its data descriptor and in the central directory."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = next(i for i in archive.infolist() if i.filename.endswith("serialization_id"))
        serialization_id = archive.read(info)
    crc = struct.pack("<I", zlib.crc32(serialization_id))
    assert data.count(serialization_id) == 1 and data.count(crc) == 2
    return data.replace(serialization_id, b"?" * 20 + serialization_id[20:]).replace(crc, b"crc?")


# ------------------------------------------------------------------------------ storages
def test_our_views_are_one_storage_in_pytorch_with_its_offsets_and_strides():
    base = np.arange(24, dtype=np.float64).reshape(4, 6)
    theirs = ours_to_torch(
        {
            "base": ta.from_numpy(base),
            "row": ta.from_numpy(base[2]),
            "block": ta.from_numpy(base[1:3, 2:5]),
            "t": ta.from_numpy(base.T),
            "step": ta.from_numpy(base[:, ::2]),
            "broadcast": ta.from_numpy(np.broadcast_to(base[0], (3, 6))),
        }
    )
    for key, offset, stride in (
        ("row", 12, (1,)),
        ("block", 8, (6, 1)),
        ("t", 0, (1, 6)),
        ("step", 0, (6, 2)),
        ("broadcast", 0, (0, 1)),
    ):
        tensor = theirs[key]
        assert same_storage(tensor, theirs["base"]), key
        assert tensor.storage_offset() == offset and tensor.stride() == stride, key
    theirs["base"][2, 0] = -1.0
    assert theirs["row"][0] == -1.0 and theirs["t"][0, 2] == -1.0
    assert np.array_equal(theirs["block"].numpy(), base[1:3, 2:5])


def test_pytorchs_views_share_memory_here():
    base = torch.arange(24.0).reshape(4, 6)
    ours = torch_to_ours(
        {"base": base, "row": base[2], "block": base[1:3, 2:5], "t": base.t(),
         "expand": base[0].expand(3, 6), "diag": base.diagonal()}
    )  # fmt: skip
    for key in ("row", "block", "t", "expand", "diag"):
        assert np.shares_memory(ours[key].numpy(), ours["base"].numpy()), key
    assert np.array_equal(ours["diag"].numpy(), base.diagonal().numpy())
    assert np.array_equal(ours["expand"].numpy(), base[0].expand(3, 6).numpy())
    ours["base"].numpy()[2, 3] = 100.0
    assert ours["row"].numpy()[3] == 100.0 and ours["t"].numpy()[3, 2] == 100.0


def test_negative_strides_and_big_endian_arrays_reach_pytorch_as_values():
    array = np.arange(6, dtype=np.float32).reshape(2, 3)
    theirs = ours_to_torch(
        {"flipped": ta.from_numpy(array[:, ::-1]), "big": array.astype(">f4"), "np": array}
    )
    assert np.array_equal(theirs["flipped"].numpy(), array[:, ::-1])
    assert np.array_equal(theirs["big"].numpy(), array) and theirs["big"].dtype == torch.float32
    assert np.array_equal(theirs["np"].numpy(), array)


def test_parameters_go_both_ways_as_parameters():
    theirs = ours_to_torch(
        {"p": nn.Parameter(np.ones(3, np.float32)), "leaf": ta.ones(2, requires_grad=True)}
    )
    assert type(theirs["p"]) is torch.nn.Parameter and theirs["p"].requires_grad
    assert type(theirs["leaf"]) is torch.Tensor and theirs["leaf"].requires_grad
    ours = torch_to_ours(
        {"p": torch.nn.Parameter(torch.ones(3)), "leaf": torch.ones(2, requires_grad=True)}
    )
    assert type(ours["p"]) is nn.Parameter and ours["p"].requires_grad
    assert type(ours["leaf"]) is ta.Tensor and ours["leaf"].requires_grad


def test_a_tensor_with_attributes_from_pytorch_keeps_them():
    t = torch.ones(2)
    t.note = "kept"
    p = torch.nn.Parameter(torch.zeros(1))
    p.tag = 3
    ours = torch_to_ours({"t": t, "p": p})
    assert ours["t"].note == "kept" and np.array_equal(ours["t"].numpy(), [1, 1])
    assert type(ours["p"]) is nn.Parameter and ours["p"].tag == 3


# ------------------------------------------------------------------------------ models
def _mlp_here(seed: int) -> nn.Module:
    ta.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 3)
    )


def _mlp_there(seed: int):
    torch.manual_seed(seed)
    return torch.nn.Sequential(
        torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 16), torch.nn.ReLU(),
        torch.nn.Linear(16, 3),
    )  # fmt: skip


def _batch(seed: int):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((32, 4)).astype(np.float32)
    y = rng.integers(0, 3, size=32)
    return x, y


def test_a_model_trained_here_gives_the_same_outputs_in_pytorch(tmp_path):
    model = _mlp_here(0)
    optimizer = ta.optim.Adam(model.parameters(), lr=0.01)
    x, y = _batch(0)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = ta.nn.functional.cross_entropy(model(ta.tensor(x)), ta.tensor(y))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]  # it learned something
    ta.save(model.state_dict(), tmp_path / "trained_here.pt")
    ta.save(optimizer.state_dict(), tmp_path / "optimizer_here.pt")
    there = _mlp_there(1)
    there.load_state_dict(torch.load(tmp_path / "trained_here.pt", weights_only=True))
    with torch.no_grad():
        out_there = there(torch.from_numpy(x)).numpy()
    out_here = model(ta.tensor(x)).numpy()
    np.testing.assert_allclose(out_there, out_here, rtol=1e-5, atol=1e-6)
    state = torch.load(tmp_path / "optimizer_here.pt", weights_only=True)
    assert sorted(state["state"]) == list(range(6)) and state["param_groups"][0]["lr"] == 0.01
    assert state["state"][0]["exp_avg"].shape == there[0].weight.shape


def test_a_model_trained_in_pytorch_gives_the_same_outputs_here(tmp_path):
    there = _mlp_there(2)
    optimizer = torch.optim.Adam(there.parameters(), lr=0.01)
    x, y = _batch(1)
    for _ in range(30):
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(there(torch.from_numpy(x)), torch.from_numpy(y))
        loss.backward()
        optimizer.step()
    torch.save(
        {"model": there.state_dict(), "optimizer": optimizer.state_dict()}, tmp_path / "c.pt"
    )
    checkpoint = ta.load(tmp_path / "c.pt")
    here = _mlp_here(3)
    here.load_state_dict(checkpoint["model"])
    with torch.no_grad():
        out_there = there(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(here(ta.tensor(x)).numpy(), out_there, rtol=1e-5, atol=1e-6)
    state = checkpoint["optimizer"]["state"]
    assert state[0]["step"].item() == 30.0 and state[0]["exp_avg"].shape == (16, 4)
    # ... and back: PyTorch reads what we write of it
    ta.save(checkpoint, tmp_path / "again.pt")
    again = torch.load(tmp_path / "again.pt", weights_only=True)
    for key, tensor in there.state_dict().items():
        assert torch.equal(again["model"][key], tensor), key


# ------------------------------------------------------------------------------ the container
def test_pytorch_maps_our_files_into_memory(tmp_path):
    ta.save(
        {"w": ta.from_numpy(values(100, np.float32)), "i": ta.tensor([1, 2])}, tmp_path / "m.pt"
    )
    theirs = torch.load(tmp_path / "m.pt", weights_only=True, mmap=True)
    assert np.array_equal(theirs["w"].numpy(), values(100, np.float32))
    torch.save({"w": torch.arange(10.0)}, tmp_path / "t.pt")
    ours = ta.load(tmp_path / "t.pt", mmap=True)
    assert np.array_equal(ours["w"].numpy(), np.arange(10.0, dtype=np.float32))


def test_pytorch_reads_our_zip64_fields(monkeypatch, tmp_path):
    monkeypatch.setattr(zip_archive, "_ZIP64_LIMIT", 0)  # every size and offset "past 4 GiB"
    ta.save({"w": ta.from_numpy(values(50, np.float64)), "e": ta.zeros(0)}, tmp_path / "z.pt")
    theirs = torch.load(tmp_path / "z.pt", weights_only=True)
    assert np.array_equal(theirs["w"].numpy(), values(50, np.float64)) and theirs["e"].numel() == 0


def test_other_pickle_protocols_go_both_ways():
    for protocol in (3, 4, 5):
        buffer = io.BytesIO()
        torch.save({"w": torch.ones(2), "n": [1, (2, 3)]}, buffer, pickle_protocol=protocol)
        buffer.seek(0)
        ours = ta.load(buffer)
        assert np.array_equal(ours["w"].numpy(), [1, 1]) and ours["n"] == [1, (2, 3)]
        buffer = io.BytesIO()
        ta.save({"w": ta.ones(2)}, buffer, pickle_protocol=protocol)
        buffer.seek(0)
        # (PyTorch's own weights-only reader does not know protocol 4's FRAME opcode)
        theirs = torch.load(buffer, weights_only=protocol == 3)
        assert torch.equal(theirs["w"], torch.ones(2))


def test_a_large_tensor_goes_both_ways():
    array = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    assert np.array_equal(ours_to_torch(ta.from_numpy(array)).numpy(), array)
    assert np.array_equal(torch_to_ours(torch.from_numpy(array)).numpy(), array)


def test_pytorchs_bfloat16_is_a_clear_error_here():
    with pytest.raises(SerializationError, match="bfloat16"):
        torch_to_ours({"w": torch.ones(2, dtype=torch.bfloat16)})


def test_pytorchs_refusal_matches_ours_for_a_module():
    buffer = io.BytesIO()
    ta.save(nn.Linear(2, 2), buffer)
    buffer.seek(0)
    with pytest.raises(Exception, match="Linear"):
        torch.load(buffer, weights_only=True)


def test_the_committed_pytorch_checkpoints_are_what_the_script_writes(tmp_path):
    spec = importlib.util.spec_from_file_location("make", DATA / "make_torch_checkpoints.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    torch.save(make.checkpoint(), tmp_path / "torch_checkpoint.pt")
    assert (tmp_path / "torch_checkpoint.pt").read_bytes() == (
        DATA / "torch_checkpoint.pt"
    ).read_bytes()
