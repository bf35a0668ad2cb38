"""ta.save / ta.load: PyTorch's zip checkpoint format without PyTorch.

Round trips of tensors (every dtype, 0-d, empty, views sharing a storage, NumPy-only layouts),
state dicts, optimizer state, whole modules; the archive's layout; a checkpoint written by
PyTorch 2.13 (tests/data, made by tests/data/make_torch_checkpoints.py) read in a process where
`import torch` fails, against the numbers written here; the weights-only reader refusing what
is not weights (and running nothing); truncated, empty and foreign files; map_location.
PyTorch reading our files is tests/test_serialization_vs_torch.py (skipped without torch).
"""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.nn as nn
from tinygrad_attn import serialization
from tinygrad_attn.serialization import SerializationError, zip_archive

DATA = Path(__file__).resolve().parent / "data"
TORCH_CHECKPOINT = DATA / "torch_checkpoint.pt"
ROOT = Path(__file__).resolve().parent.parent


def roundtrip(obj, **load_args):
    buffer = io.BytesIO()
    ta.save(obj, buffer)
    buffer.seek(0)
    return ta.load(buffer, **load_args)


def records(data: bytes) -> dict[str, bytes]:
    """The archive's records by name, in order (read with the standard library's zipfile)."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rebuilt(data: bytes, change_pickle=None, pickle_bytes: bytes | None = None) -> bytes:
    """The archive `data` written again with its data.pkl changed (by a function of the old
    bytes, or replaced); the other records as they were."""
    old = records(data)
    folder = next(iter(old)).split("/")[0]
    out = io.BytesIO()
    writer = zip_archive.ArchiveWriter(out, folder)
    for full_name, content in old.items():
        name = full_name[len(folder) + 1 :]
        if name == ".data/serialization_id":
            continue
        if name == "data.pkl":
            content = pickle_bytes if pickle_bytes is not None else change_pickle(content)
        writer.write_record(name, content)
    writer.close()
    return out.getvalue()


def archive_with_pickle(pickled: bytes) -> bytes:
    """A well-formed checkpoint archive whose data.pkl is `pickled` (and no storages)."""
    buffer = io.BytesIO()
    ta.save({}, buffer)
    return rebuilt(buffer.getvalue(), pickle_bytes=pickled)


def load_bytes(data: bytes, **load_args):
    return ta.load(io.BytesIO(data), **load_args)


# ------------------------------------------------------------------------------ round trips
DTYPES = [
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8,
    np.bool_, np.uint16, np.uint32, np.uint64,
]  # fmt: skip


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_a_tensor_of_every_dtype_round_trips_exactly(dtype):
    values = np.array([[0, 1, 2], [3, 100, 5]]).astype(dtype)
    if np.dtype(dtype).kind == "f":
        values = values / 7 - 3
    out = roundtrip(ta.from_numpy(values))
    assert isinstance(out, ta.Tensor) and not isinstance(out, nn.Parameter)
    assert out.dtype == values.dtype and out.shape == (2, 3)
    assert np.array_equal(out.numpy(), values)


def test_0d_and_empty_tensors_round_trip():
    out = roundtrip(
        {"scalar": ta.tensor(2.5), "int": ta.tensor(np.int64(-3)), "empty": ta.zeros(0, 4)}
    )
    assert out["scalar"].shape == () and out["scalar"].item() == 2.5
    assert out["int"].dtype == np.int64 and out["int"].item() == -3
    assert out["empty"].shape == (0, 4) and out["empty"].dtype == np.float32


def test_a_state_dict_loads_into_a_fresh_module_and_gives_the_same_outputs():
    ta.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    state = roundtrip(model.state_dict())
    assert list(state) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    fresh = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    fresh.load_state_dict(state)
    x = ta.randn(5, 4)
    assert np.array_equal(model(x).numpy(), fresh(x).numpy())


def test_containers_and_plain_values_come_back_equal_and_of_the_same_type():
    obj = collections.OrderedDict(
        [
            ("b", [1, -2**70, 2.5, float("inf"), None, True, "text", "ünï", b"\x00\xffbytes"]),
            ("a", (1, (2, 3), {"nested": {4, 5}}, frozenset({6}), 1 + 2j)),
            ("empty", ([], (), {}, "")),
        ]
    )  # fmt: skip
    out = roundtrip(obj)
    assert type(out) is collections.OrderedDict and list(out) == ["b", "a", "empty"]
    assert out == obj


def test_tensors_that_share_memory_share_one_storage_and_still_do_after_loading():
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    state = {
        "base": ta.from_numpy(base),
        "row": ta.from_numpy(base[1]),  # offset 4
        "cols": ta.from_numpy(base[:, 1:3]),  # strided, offset 1
        "t": ta.from_numpy(base.T),  # strides (1, 4)
        "again": ta.from_numpy(base),  # a second tensor over the same ndarray
    }
    buffer = io.BytesIO()
    ta.save(state, buffer)
    names = [n for n in records(buffer.getvalue()) if "/data/" in n]
    assert names == ["archive/data/0"]  # one storage for all five
    out = load_bytes(buffer.getvalue())
    for key, tensor in state.items():
        assert np.array_equal(out[key].numpy(), tensor.numpy()), key
        assert np.shares_memory(out[key].numpy(), out["base"].numpy()), key
    out["row"].numpy()[0] = -1.0  # writes through, as in the saved arrays
    assert out["base"].numpy()[1, 0] == -1.0 and out["t"].numpy()[0, 1] == -1.0
    assert out["base"].numpy().flags.writeable


def test_a_view_saved_alone_saves_its_whole_base_as_pytorch_does():
    base = np.arange(10, dtype=np.float64)
    buffer = io.BytesIO()
    ta.save(ta.from_numpy(base[3:5]), buffer)
    assert len(records(buffer.getvalue())["archive/data/0"]) == 10 * 8
    assert np.array_equal(load_bytes(buffer.getvalue()).numpy(), [3.0, 4.0])


@pytest.mark.parametrize(
    "make",
    [
        lambda a: np.asfortranarray(a),
        lambda a: a[::-1],  # a negative stride: PyTorch has none, a copy is written
        lambda a: a[:, ::2],
        lambda a: np.broadcast_to(a[0], (5, 4)),  # stride 0
        lambda a: a.astype(a.dtype.newbyteorder(">")),  # big-endian: written as little
        lambda a: np.frombuffer(a.tobytes(), np.float32)[1:].reshape(-1, 1),
        lambda a: a.view(np.uint8)[1:].view(np.uint8),
    ],
    ids=["fortran", "negative", "step", "broadcast", "big-endian", "frombuffer", "bytes"],
)
def test_numpy_only_layouts_are_read_back_with_the_same_values(make):
    array = make(np.arange(12, dtype=np.float32).reshape(3, 4))
    out = roundtrip(ta.from_numpy(array) if array.dtype.isnative else array)
    assert np.array_equal(out.numpy(), array) and out.dtype == array.dtype.newbyteorder("=")


def test_parameters_and_requires_grad_are_kept_as_pytorch_keeps_them():
    weight = nn.Parameter(np.ones((2, 3), np.float32))
    frozen = nn.Parameter(np.zeros(2, np.float32), requires_grad=False)
    leaf = ta.ones(3, requires_grad=True)
    made = leaf * 2  # a tensor made by an op: saved as a leaf that requires grad (PyTorch)
    out = roundtrip({"weight": weight, "frozen": frozen, "leaf": leaf, "made": made})
    assert type(out["weight"]) is nn.Parameter and out["weight"].requires_grad
    assert type(out["frozen"]) is nn.Parameter and not out["frozen"].requires_grad
    assert type(out["leaf"]) is ta.Tensor and out["leaf"].requires_grad and out["leaf"].is_leaf
    assert out["made"].requires_grad and out["made"].is_leaf
    assert np.array_equal(out["made"].numpy(), [2, 2, 2])
    (out["weight"] * 3).sum().backward()
    assert np.array_equal(np.asarray(out["weight"].grad), np.full((2, 3), 3.0))


def test_a_parameter_and_a_view_of_it_share_memory_after_loading():
    weight = nn.Parameter(np.arange(6, dtype=np.float32).reshape(2, 3))
    out = roundtrip({"weight": weight, "row": ta.from_numpy(weight.numpy()[1])})
    assert type(out["weight"]) is nn.Parameter
    assert np.shares_memory(out["weight"].numpy(), out["row"].numpy())


def test_numpy_values_are_written_as_pytorch_values():
    out = roundtrip(
        {
            "array": np.arange(3, dtype=np.int32),
            "scalars": [np.float32(0.5), np.int64(7), np.bool_(True)],
            "dtype": ta.float32,
            "int_dtype": ta.long,
            "device": ta.device("cpu"),
        }
    )
    assert isinstance(out["array"], ta.Tensor) and out["array"].dtype == np.int32
    assert out["scalars"] == [0.5, 7, True]
    assert [type(v) for v in out["scalars"]] == [float, int, bool]
    assert out["dtype"] == ta.float32 and out["int_dtype"] == ta.long
    assert out["device"] == ta.device("cpu")


def test_an_optimizer_resumes_bit_for_bit_from_a_checkpoint():
    def model_and_optimizer():
        ta.manual_seed(1)
        model = nn.Linear(3, 2)
        return model, ta.optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.01)

    def step(model, optimizer, x):
        optimizer.zero_grad()
        (model(x) ** 2).sum().backward()
        optimizer.step()

    x = ta.randn(4, 3)
    model, optimizer = model_and_optimizer()
    step(model, optimizer, x)
    checkpoint = roundtrip({"model": model.state_dict(), "optimizer": optimizer.state_dict()})
    assert checkpoint["optimizer"]["param_groups"][0]["betas"] == (0.9, 0.999)
    resumed, resumed_optimizer = model_and_optimizer()
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    for _ in range(2):
        step(model, optimizer, x)
        step(resumed, resumed_optimizer, x)
    assert np.array_equal(model.weight.numpy(), resumed.weight.numpy())
    assert np.array_equal(model.bias.numpy(), resumed.bias.numpy())


def test_a_whole_module_round_trips_with_weights_only_false():
    ta.manual_seed(2)
    block = nn.TransformerBlock(8, 2)
    buffer = io.BytesIO()
    ta.save(block, buffer)
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="TransformerBlock") as refused:
        ta.load(buffer)
    assert "weights_only=False" in str(refused.value)
    buffer.seek(0)
    loaded = ta.load(buffer, weights_only=False)
    assert type(loaded) is nn.TransformerBlock
    x = ta.randn(1, 5, 8)
    assert np.array_equal(loaded(x).numpy(), block(x).numpy())
    assert [p.name for p in loaded.parameters()] == [p.name for p in block.parameters()]
    pairs = zip(loaded.parameters(), block.parameters())
    assert not any(np.shares_memory(a.numpy(), b.numpy()) for a, b in pairs)


# ------------------------------------------------------------------------------ the file
def test_the_archive_has_pytorchs_records_in_pytorchs_order(tmp_path):
    path = tmp_path / "model.ckpt.pt"
    ta.save({"a": ta.ones(3), "b": ta.zeros(2, dtype=ta.int64)}, path)
    data = path.read_bytes()
    found = records(data)
    assert list(found) == [
        "model.ckpt/data.pkl",
        "model.ckpt/.format_version",
        "model.ckpt/.storage_alignment",
        "model.ckpt/byteorder",
        "model.ckpt/data/0",
        "model.ckpt/data/1",
        "model.ckpt/version",
        "model.ckpt/.data/serialization_id",
    ]
    assert found["model.ckpt/.format_version"] == b"1"
    assert found["model.ckpt/.storage_alignment"] == b"64"
    assert found["model.ckpt/byteorder"] == sys.byteorder.encode()
    assert found["model.ckpt/version"] == b"3\n"
    assert found["model.ckpt/data/0"] == np.ones(3, np.float32).tobytes()
    assert len(found["model.ckpt/.data/serialization_id"]) == 40
    assert found["model.ckpt/.data/serialization_id"].isdigit()
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            name_length, extra_length = struct.unpack(
                "<HH", data[info.header_offset + 26 : info.header_offset + 30]
            )
            start = info.header_offset + 30 + name_length + extra_length
            assert start % 64 == 0, info.filename  # PyTorch's alignment, for mmap
            assert data[start : start + info.file_size] == archive.read(info)


def test_the_pickle_names_pytorchs_rebuild_functions_and_storages():
    buffer = io.BytesIO()
    ta.save({"w": nn.Parameter(np.ones(2, np.float32)), "n": ta.tensor([1, 2])}, buffer)
    pickled = records(buffer.getvalue())["archive/data.pkl"]
    assert pickled.startswith(b"\x80\x02")  # protocol 2, as torch.save
    for name in (
        b"ctorch._utils\n_rebuild_parameter\n",
        b"ctorch._utils\n_rebuild_tensor_v2\n",
        b"ctorch\nFloatStorage\n",
        b"ctorch\nLongStorage\n",
        b"ccollections\nOrderedDict\n",
    ):
        assert name in pickled
    assert b"tinygrad_attn" not in pickled and b"numpy" not in pickled


def test_paths_and_file_objects_both_work_and_name_the_folder_as_pytorch(tmp_path):
    ta.save(ta.ones(2), str(tmp_path / "a.pt"))
    ta.save(ta.ones(2), tmp_path / "noext")
    with open(tmp_path / "c.bin", "wb") as f:
        ta.save(ta.ones(2), f)
    for name, folder in (("a.pt", "a"), ("noext", "noext"), ("c.bin", "archive")):
        assert next(iter(records((tmp_path / name).read_bytes()))) == f"{folder}/data.pkl"
        with open(tmp_path / name, "rb") as f:
            assert np.array_equal(ta.load(f).numpy(), [1, 1])
        assert np.array_equal(ta.load(str(tmp_path / name)).numpy(), [1, 1])


def test_a_save_that_fails_leaves_the_old_file_as_it_was(tmp_path):
    path = tmp_path / "ckpt.pt"
    ta.save({"w": ta.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        ta.save({"w": ta.zeros(2), "f": lambda: 0}, path)
    assert path.read_bytes() == before


def test_mmap_maps_the_storages_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    ta.save({"w": ta.arange(6.0).reshape(2, 3), "v": ta.tensor([1, 2, 3])}, path)
    before = path.read_bytes()
    out = ta.load(path, mmap=True)
    assert np.array_equal(out["w"].numpy(), np.arange(6.0).reshape(2, 3))
    assert np.array_equal(out["v"].numpy(), [1, 2, 3])
    out["w"].numpy()[0, 0] = 42.0  # writable; the file does not change
    assert out["w"].numpy()[0, 0] == 42.0 and path.read_bytes() == before
    with pytest.raises(TypeError, match="mmap"):
        ta.load(io.BytesIO(before), mmap=True)


def test_zip64_fields_are_written_and_read_when_sizes_pass_the_limit(monkeypatch):
    # Every size and offset counts as past 4 GiB: the same code paths as a file that large.
    monkeypatch.setattr(zip_archive, "_ZIP64_LIMIT", 0)
    state = {"w": ta.arange(5.0), "e": ta.zeros(0)}
    buffer = io.BytesIO()
    ta.save(state, buffer)
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        assert archive.testzip() is None
        assert archive.read("archive/data/0") == state["w"].numpy().tobytes()
    out = load_bytes(buffer.getvalue())
    assert np.array_equal(out["w"].numpy(), np.arange(5.0)) and out["e"].shape == (0,)


def test_loaded_tensors_own_writable_memory_for_in_place_updates():
    out = roundtrip({"w": ta.ones(3), "p": nn.Parameter(np.ones(2, np.float32))})
    out["w"].add_(1.0)
    with ta.no_grad():
        out["p"] -= 0.5
    assert np.array_equal(out["w"].numpy(), [2, 2, 2]) and np.array_equal(
        out["p"].numpy(), [0.5, 0.5]
    )


# ------------------------------------------------------------------------------ PyTorch's file
EXPECTED_MODEL = {
    "linear.weight": ("float32", [3, 4], (np.arange(12).reshape(3, 4) * 0.5 - 1.0).tolist()),
    "linear.bias": ("float32", [3], [0.25, -0.5, 1.0]),
    "row": ("float32", [4], [1.0, 1.5, 2.0, 2.5]),
    "cols": ("float32", [3, 2], [[-0.5, 0.0], [1.5, 2.0], [3.5, 4.0]]),
    "transposed": ("float32", [4, 3], (np.arange(12).reshape(3, 4) * 0.5 - 1.0).T.tolist()),
    "double": ("float64", [2], [1.0 / 3.0, -2.5]),
    "half": ("float16", [3], [0.5, -1.25, 65504.0]),
    "int8": ("int8", [3], [-128, 0, 127]),
    "uint8": ("uint8", [3], [0, 200, 255]),
    "int16": ("int16", [2], [-32768, 12345]),
    "int32": ("int32", [1, 2], [[-(2**31), 7]]),
    "int64": ("int64", [2], [-(2**40), 2**40 + 1]),
    "bool": ("bool", [3], [True, False, True]),
    "scalar": ("float32", [], 2.5),
    "empty": ("float32", [0, 4], []),
    "param": ("float32", [1, 2], [[1.0, 2.0]]),
}

_READ_WITHOUT_TORCH = """
import json, sys
sys.modules["torch"] = None  # from here on, `import torch` raises ImportError
try:
    import torch
except ImportError:
    pass
else:
    raise SystemExit("torch was importable")
import numpy as np
import tinygrad_attn as ta

checkpoint = ta.load(sys.argv[1])
model = checkpoint["model"]
out = {
    key: [str(t.dtype), list(t.shape), t.numpy().tolist(), type(t).__name__, t.requires_grad]
    for key, t in model.items()
}
base = model["linear.weight"].numpy()
views = ("row", "cols", "transposed")
out["_shares"] = [bool(np.shares_memory(base, model[k].numpy())) for k in views]
state = checkpoint["optimizer"]["state"]
out["_optimizer"] = [
    sorted(state), state[0]["step"].item(), state[0]["exp_avg"].numpy().tolist(),
    list(state[1]["exp_avg"].shape), checkpoint["optimizer"]["param_groups"],
]
out["_rest"] = [checkpoint["epoch"], checkpoint["loss"], checkpoint["name"],
                str(checkpoint["dtype"]), list(checkpoint["shape"])]
out["_torch"] = repr(sys.modules["torch"])
print(json.dumps(out))
"""


def test_a_checkpoint_written_by_pytorch_loads_where_torch_cannot_be_imported():
    done = subprocess.run(
        [sys.executable, "-c", _READ_WITHOUT_TORCH, str(TORCH_CHECKPOINT)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    for key, (dtype, shape, values) in EXPECTED_MODEL.items():
        assert out[key][:3] == [dtype, shape, values], key
        assert out[key][3:] == (["Parameter", True] if key == "param" else ["Tensor", False])
    assert out["_shares"] == [True, True, True]
    assert out["_optimizer"] == [
        [0, 1],
        3.0,
        [0.125, 0.125, 0.125],
        [2, 2],
        [
            {
                "lr": 0.001,
                "betas": [0.9, 0.999],
                "eps": 1e-08,
                "weight_decay": 0.01,
                "amsgrad": False,
                "foreach": None,
                "params": [0, 1],
            }
        ],
    ]
    assert out["_rest"] == [7, 1.5, "tiny", "float32", [2, 3]]
    assert out["_torch"] == "None"


def test_pytorchs_checkpoint_keeps_its_shared_storage_and_types():
    checkpoint = ta.load(TORCH_CHECKPOINT)
    model = checkpoint["model"]
    assert type(model) is collections.OrderedDict and list(model) == list(EXPECTED_MODEL)
    model["linear.weight"].numpy()[1, 0] = 99.0
    assert model["row"].numpy()[0] == 99.0 and model["transposed"].numpy()[0, 1] == 99.0
    assert checkpoint["dtype"] == ta.float32 and checkpoint["shape"] == (2, 3)
    assert type(checkpoint["optimizer"]["param_groups"][0]["betas"]) is tuple


def test_pytorchs_checkpoint_reads_the_same_with_the_full_unpickler():
    full = ta.load(TORCH_CHECKPOINT, weights_only=False)
    weights_only = ta.load(TORCH_CHECKPOINT)
    for key, tensor in weights_only["model"].items():
        assert type(full["model"][key]) is type(tensor), key
        assert np.array_equal(full["model"][key].numpy(), tensor.numpy()), key
    assert full["optimizer"]["param_groups"] == weights_only["optimizer"]["param_groups"]
    assert full["shape"] == (2, 3) and full["dtype"] == ta.float32


def test_pytorchs_checkpoint_loads_into_a_module():
    class Tiny(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(4, 3)

    tiny = Tiny()
    model = ta.load(TORCH_CHECKPOINT)["model"]
    result = tiny.load_state_dict(model, strict=False)
    assert result.missing_keys == [] and "row" in result.unexpected_keys
    assert np.array_equal(tiny.linear.weight.numpy(), np.arange(12).reshape(3, 4) * 0.5 - 1.0)
    assert np.array_equal(tiny.linear.bias.numpy(), [0.25, -0.5, 1.0])


def test_pytorchs_bfloat16_tensors_are_a_clear_error():
    with pytest.raises(SerializationError, match="bfloat16.*t.float()"):
        ta.load(DATA / "torch_bfloat16.pt")


# ------------------------------------------------------------------------------ refusals
class _RunsACommand:
    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


class _OpensAFile:
    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self):
        return open, (self.path, "w")


@pytest.mark.skipif(os.name != "posix", reason="the payload is a POSIX shell command")
def test_a_file_calling_os_system_is_refused_and_nothing_runs(tmp_path):
    side_effect = tmp_path / "it-ran"
    data = archive_with_pickle(pickle.dumps({"w": _RunsACommand(f"touch {side_effect}")}, 2))
    with pytest.raises(pickle.UnpicklingError) as refused:
        load_bytes(data)
    message = str(refused.value)
    assert f"{os.system.__module__}.system" in message and "nothing in the file has run" in message
    assert "weights_only=False" in message and "add_safe_globals" in message
    assert not side_effect.exists()
    load_bytes(data, weights_only=False)  # the payload is real: a full unpickler runs it
    assert side_effect.exists()


@pytest.mark.parametrize(
    "payload",
    [
        lambda p: {"x": _OpensAFile(p)},
        lambda p: [ta.ones(1), _OpensAFile(p)],  # after a tensor: still refused, nothing runs
        lambda p: collections.OrderedDict(a=(1, _OpensAFile(p))),
    ],
)
@pytest.mark.parametrize("protocol", [0, 1, 2, 4, 5])
def test_a_global_outside_the_allowed_names_is_refused_in_every_protocol(
    tmp_path, payload, protocol
):
    side_effect = tmp_path / "opened"
    data = archive_with_pickle(pickle.dumps(payload(str(side_effect)), protocol))
    with pytest.raises(pickle.UnpicklingError, match="refused|protocol 0"):
        load_bytes(data)
    assert not side_effect.exists()


@pytest.mark.parametrize(
    "pickled, says",
    [
        (b"\x80\x02ctorch\nfloat32\n)R.", "REDUCE would call"),  # a dtype is not callable
        (b"\x80\x02ccollections\nOrderedDict\n)R}b.", None),  # BUILD on OrderedDict: allowed
        (b"\x80\x02ctorch\nTensor\n)\x81.", "NEWOBJ"),  # Tensor is named, not made
        (b"\x80\x02ctorch._utils\n_rebuild_qtensor\n.", "quantized"),
        (b"\x80\x02ctorch.nn.modules.linear\nLinear\n.", "refused"),
        (b"\x80\x02\x82\x01.", "extension registry"),  # EXT1
        (b"\x80\x02K\x01K\x02", "cut short"),  # no STOP
        (b"\x80\x02h\x05.", "memo entry 5"),
        (b"\x80\x02garbage", "malformed"),
        (b"\x80\x02K\x01K\x02a.", "not a list"),  # APPEND onto an int
    ],
)
def test_the_weights_only_reader_refuses_what_torch_save_never_writes(pickled, says):
    data = archive_with_pickle(pickled)
    if says is None:
        assert load_bytes(data) == collections.OrderedDict()
        return
    with pytest.raises((pickle.UnpicklingError, SerializationError), match=says):
        load_bytes(data)


def test_unrepresentable_pytorch_objects_are_named_in_the_error():
    buffer = io.BytesIO()
    ta.save({"w": ta.ones(2)}, buffer)
    quantized = rebuilt(
        buffer.getvalue(),
        lambda p: p.replace(b"_rebuild_tensor_v2\n", b"_rebuild_qtensor\n"),
    )
    with pytest.raises(SerializationError, match="quantized tensor"):
        load_bytes(quantized)
    with pytest.raises(SerializationError, match="quantized tensor"):
        load_bytes(quantized, weights_only=False)
    whole_model = archive_with_pickle(b"\x80\x02ctorch.nn.modules.linear\nLinear\n.")
    with pytest.raises(SerializationError, match="state_dict"):
        load_bytes(whole_model, weights_only=False)


class Config:
    """A user's class, pickled by reference (NEWOBJ + BUILD)."""

    def __init__(self, width: int) -> None:
        self.width = width


def test_safe_globals_allow_a_users_class_only_while_asked():
    data = io.BytesIO()
    ta.save({"config": Config(8), "w": ta.ones(1)}, data)
    data = data.getvalue()
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        load_bytes(data)
    with serialization.safe_globals([Config]):
        assert Config in serialization.get_safe_globals()
        assert load_bytes(data)["config"].width == 8
    assert Config not in serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match="Config"):
        load_bytes(data)
    serialization.add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert load_bytes(data)["config"].width == 8
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(TypeError, match="module and name"):
        serialization.add_safe_globals([object()])


def test_a_tensors_state_cannot_replace_the_packages_own_attributes():
    # PyTorch keeps a tensor's Python attributes (`_rebuild_from_type_v2`); ours are refused
    # where they would replace one of the package's own.
    pickled = (
        b"\x80\x02ctorch._tensor\n_rebuild_from_type_v2\n(ctorch._utils\n_rebuild_tensor_v2\n"
        b"ctorch\nTensor\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000"
        b"X\x03\x00\x00\x00cpuK\x01tQK\x00K\x01\x85K\x01\x85\x89ccollections\nOrderedDict\n)Rt"
        b"}X\x04\x00\x00\x00gradK\x01stR."
    )
    buffer = io.BytesIO()
    ta.save(ta.ones(1), buffer)
    with pytest.raises(SerializationError, match="'grad'"):
        load_bytes(rebuilt(buffer.getvalue(), pickle_bytes=pickled))
    allowed = pickled.replace(b"\x04\x00\x00\x00grad", b"\x04\x00\x00\x00note")
    assert load_bytes(rebuilt(buffer.getvalue(), pickle_bytes=allowed)).note == 1


# ------------------------------------------------------------------------------ bad files
def _checkpoint_bytes() -> bytes:
    buffer = io.BytesIO()
    ta.save({"w": ta.arange(8, dtype=ta.float32), "n": ta.tensor([1, 2, 3])}, buffer)
    return buffer.getvalue()


def _assert_clear(err: BaseException) -> None:
    assert "ta.load" in str(err)
    assert err.__cause__ is None and (err.__context__ is None or err.__suppress_context__)


@pytest.mark.parametrize("cut", [1, 4, 30, 100, 0.5, -60, -22, -1])
def test_a_truncated_file_is_a_clear_error(cut):
    data = _checkpoint_bytes()
    end = int(len(data) * cut) if isinstance(cut, float) else cut
    with pytest.raises(SerializationError, match="cut short|zip") as caught:
        load_bytes(data[:end])
    _assert_clear(caught.value)
    assert isinstance(caught.value, RuntimeError) and isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    "content, says",
    [
        (b"", "empty"),
        (b"hello, this is text\n", "does not start like a zip"),
        (pickle.dumps({"w": np.ones(2)}, 2), "plain pickle"),
        (pickle.dumps(_RunsACommand("exit 3")), "plain pickle"),
        (pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + b"rest", "legacy format"),
        (struct.pack("<Q", 2) + b"{}" + b"\x00" * 8, "safetensors"),
        (b"PK\x05\x06" + b"\x00" * 18, "does not start like a zip"),
    ],
    ids=["empty", "text", "pickle", "evil-pickle", "legacy", "safetensors", "empty-zip"],
)
def test_foreign_files_are_a_clear_error(tmp_path, content, says):
    path = tmp_path / "foreign.pt"
    path.write_bytes(content)
    for mmap in (False, True):
        with pytest.raises(SerializationError, match=says) as caught:
            ta.load(path, mmap=mmap)
        _assert_clear(caught.value)


def test_zip_archives_that_are_not_checkpoints_are_a_clear_error(tmp_path):
    np.savez(tmp_path / "arrays.npz", a=np.ones(2))
    with pytest.raises(SerializationError, match="some other zip archive"):
        ta.load(tmp_path / "arrays.npz")
    script = io.BytesIO()
    with zipfile.ZipFile(script, "w") as archive:
        archive.writestr("model/data.pkl", b"")
        archive.writestr("model/constants.pkl", b"")
    with pytest.raises(SerializationError, match="TorchScript"):
        load_bytes(script.getvalue())


def test_a_damaged_record_is_a_clear_error():
    data = bytearray(_checkpoint_bytes())
    at = data.find(np.arange(8.0, dtype=np.float32).tobytes())
    data[at + 5] ^= 0xFF
    with pytest.raises(SerializationError, match="damaged") as caught:
        load_bytes(bytes(data))
    _assert_clear(caught.value)


def test_a_storage_or_tensor_that_does_not_fit_is_a_clear_error():
    data = _checkpoint_bytes()
    wrong_numel = rebuilt(data, lambda p: p.replace(b"K\x08t", b"K\x09t", 1))  # pid's numel
    with pytest.raises(SerializationError, match="holds 32 bytes"):
        load_bytes(wrong_numel)
    too_long = rebuilt(data, lambda p: p.replace(b"QK\x00K\x08\x85", b"QK\x01K\x08\x85", 1))
    with pytest.raises(SerializationError, match="does not fit"):
        load_bytes(too_long)


def test_file_objects_must_be_binary_and_seekable(tmp_path):
    path = tmp_path / "w.pt"
    ta.save(ta.ones(1), path)
    with open(path) as text, pytest.raises(TypeError, match="text mode"):
        ta.load(text)

    class Pipe(io.RawIOBase):
        def readable(self):
            return True

        def seekable(self):
            return False

    with pytest.raises(TypeError, match="cannot seek"):
        ta.load(Pipe())
    with pytest.raises(TypeError, match="path"):
        ta.load(42)
    with pytest.raises(TypeError, match="path"):
        ta.save(ta.ones(1), 42)


def test_saving_arguments_pytorch_has_are_checked():
    with pytest.raises(TypeError, match="pickle_module"):
        ta.save(ta.ones(1), io.BytesIO(), pickle_module=json)
    with pytest.raises(ValueError, match="pickle_protocol"):
        ta.save(ta.ones(1), io.BytesIO(), pickle_protocol=1)
    with pytest.raises(SerializationError, match="legacy|1.6"):
        ta.save(ta.ones(1), io.BytesIO(), _use_new_zipfile_serialization=False)
    buffer = io.BytesIO()
    ta.save({"w": ta.ones(2)}, buffer, pickle_protocol=4)
    assert np.array_equal(load_bytes(buffer.getvalue())["w"].numpy(), [1, 1])


def test_two_dtypes_over_one_memory_cannot_be_saved_as_in_pytorch():
    a = np.zeros(4, np.float32)
    with pytest.raises(SerializationError, match="different dtypes.*float32.*int32"):
        ta.save([ta.from_numpy(a), ta.from_numpy(a.view(np.int32))], io.BytesIO())


# ------------------------------------------------------------------------------ map_location
def _saved_on(location: bytes) -> bytes:
    """A checkpoint whose storages say they were saved on `location` (as from a GPU)."""
    old = b"X\x03\x00\x00\x00cpu"
    new = b"X" + struct.pack("<I", len(location)) + location
    return rebuilt(_checkpoint_bytes(), lambda p: p.replace(old, new))


@pytest.mark.parametrize(
    "map_location", [None, "cpu", "cpu:0", ta.device("cpu"), {"cpu": "cpu"}, lambda s, loc: s]
)
def test_map_location_forms_that_mean_the_cpu(map_location, recwarn):
    out = load_bytes(_checkpoint_bytes(), map_location=map_location)
    assert np.array_equal(out["w"].numpy(), np.arange(8.0))
    assert not recwarn.list


def test_tensors_saved_on_cuda_load_on_the_cpu_with_a_warning_unless_asked():
    data = _saved_on(b"cuda:0")
    with pytest.warns(UserWarning, match="cuda:0.*map_location='cpu'"):
        out = load_bytes(data)
    assert np.array_equal(out["w"].numpy(), np.arange(8.0))
    for quiet in ("cpu", {"cuda:0": "cpu"}, lambda storage, location: storage.cpu()):
        with warnings_as_errors():
            assert np.array_equal(load_bytes(data, map_location=quiet)["n"].numpy(), [1, 2, 3])


def test_map_location_naming_another_device_is_a_clear_error():
    data = _checkpoint_bytes()
    for bad in ("cuda", "cuda:1", "mps", {"cpu": "cuda:0"}):
        with pytest.raises(SerializationError, match="CPU only"):
            load_bytes(data, map_location=bad)
    with pytest.raises(SerializationError, match="CPU only"):
        load_bytes(data, map_location=lambda storage, location: storage.cuda())


def test_a_device_value_in_a_file_is_the_cpu():
    buffer = io.BytesIO()
    ta.save({"device": ta.device("cpu")}, buffer)
    cuda = rebuilt(
        buffer.getvalue(), lambda p: p.replace(b"\x03\x00\x00\x00cpu", b"\x04\x00\x00\x00cuda")
    )
    with pytest.warns(UserWarning, match="cuda"):
        assert load_bytes(cuda)["device"] == ta.device("cpu")
    assert load_bytes(cuda, map_location="cpu")["device"] == ta.device("cpu")


class warnings_as_errors:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        return self._catch.__exit__(*exc)
