"""The script-level names a PyTorch training script touches besides its model, as a CPU-only
PyTorch has them: devices (`cuda`, `backends`, `get_default_device`), mixed precision (`amp`,
`bfloat16`), distributed training (`distributed`, `nn.parallel`), `utils.checkpoint` and
`version`; and one training loop written the way GPT training scripts are, run with
`import tinygrad_attn as torch`."""

from __future__ import annotations

import os
from contextlib import nullcontext

import numpy as np
import pytest

import tinygrad_attn as torch
from tinygrad_attn.distributed import destroy_process_group, init_process_group
from tinygrad_attn.errors import DistributedError, DTypeError
from tinygrad_attn.nn import functional as F
from tinygrad_attn.nn.parallel import DataParallel, DistributedDataParallel
from tinygrad_attn.utils.checkpoint import checkpoint, checkpoint_sequential


def test_devices_are_a_cpu_only_pytorchs():
    assert not torch.cuda.is_available() and torch.cuda.device_count() == 0
    assert not torch.cuda.is_bf16_supported() and not torch.backends.mps.is_available()
    torch.cuda.manual_seed_all(0), torch.cuda.synchronize()  # nothing to seed or wait for
    assert str(torch.get_default_device()) == "cpu" and torch.version.cuda is None
    torch.set_default_device("cpu")
    with pytest.raises(RuntimeError, match="CPU only"):
        torch.set_default_device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = True  # (the switches scripts set, accepted)
    torch.backends.cudnn.allow_tf32 = True
    x = torch.ones(2)
    assert x.to("cpu", non_blocking=True) is x and x.pin_memory().tolist() == [1.0, 1.0]


def test_bfloat16_is_a_name_and_a_clear_error_as_a_dtype():
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    assert dtypes["float32"] == np.float32 and repr(torch.bfloat16) == "torch.bfloat16"
    for use in (
        lambda: torch.zeros(2, dtype=torch.bfloat16),
        lambda: torch.ones(2).to(torch.bfloat16),
        lambda: torch.nn.Linear(2, 2).to(torch.bfloat16),
    ):
        with pytest.raises(DTypeError, match="NumPy has no bfloat16.*torch.float32"):
            use()


def test_autocast_changes_nothing_and_the_scaler_is_the_disabled_one():
    layer = torch.nn.Linear(3, 2)
    x = torch.randn(4, 3)
    with torch.amp.autocast(device_type="cpu", dtype=torch.bfloat16):
        inside = layer(x)
    assert inside.dtype == torch.float32 and np.array_equal(inside.numpy(), layer(x).numpy())
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
    before = layer.weight.numpy().copy()
    loss = layer(x).sum()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    assert np.allclose(layer.weight.numpy(), before - 0.1 * layer.weight.grad.numpy())
    with pytest.raises(RuntimeError, match="enabled=False"):
        torch.amp.GradScaler("cuda", enabled=True)


def test_distributed_imports_and_says_it_is_not_there():
    assert not torch.distributed.is_available() and not torch.distributed.is_initialized()
    for call in (lambda: init_process_group(backend="gloo"), destroy_process_group):
        with pytest.raises(DistributedError, match="one process"):
            call()
    with pytest.raises(RuntimeError, match="no process group"):
        DistributedDataParallel(torch.nn.Linear(2, 2), device_ids=[0])


def test_data_parallel_on_the_cpu_is_the_module():
    layer = torch.nn.Linear(3, 2)
    wrapped = DataParallel(layer)
    x = torch.randn(5, 3)
    assert wrapped.module is layer and list(wrapped.state_dict()) == [
        "module.weight",
        "module.bias",
    ]
    assert np.array_equal(wrapped(x).numpy(), layer(x).numpy())


def test_checkpoint_gives_the_same_values_and_gradients():
    block = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU(), torch.nn.Linear(4, 4))
    x = torch.randn(3, 4, requires_grad=True)
    plain = block(x).pow(2).sum()
    plain.backward()
    expected = [p.grad.numpy().copy() for p in (x, *block.parameters())]
    for p in (x, *block.parameters()):
        p.grad = None
    checked = checkpoint(block, x, use_reentrant=False).pow(2).sum()
    checked.backward()
    assert checked.item() == plain.item()
    for got, want in zip([p.grad.numpy() for p in (x, *block.parameters())], expected):
        np.testing.assert_array_equal(got, want)
    staged = checkpoint_sequential(block, 2, x, use_reentrant=False)
    np.testing.assert_array_equal(staged.numpy(), block(x).numpy())


def test_a_gpt_training_loop_written_for_pytorch_runs(tmp_path, monkeypatch):
    """The shape of a GPT project's train.py: dtype table, nullcontext-or-autocast, memmap
    data, randint batches, a disabled scaler, grad clipping, set_to_none, torch.compile, a
    checkpoint dict saved and resumed, lr set per step in param_groups."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANK", raising=False)
    ddp = int(os.environ.get("RANK", -1)) != -1
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dtype = (
        "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() else "float32"
    )
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[
        dtype
    ]
    ctx = (
        nullcontext() if device == "cpu" else torch.amp.autocast(device_type=device, dtype=ptdtype)
    )
    np.arange(400, dtype=np.uint16).__mod__(11).tofile("train.bin")
    data = np.memmap("train.bin", dtype=np.uint16, mode="r")
    torch.manual_seed(1337)
    block_size, batch_size, vocab = 8, 4, 11

    def get_batch():
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([torch.from_numpy((data[i : i + block_size]).astype(np.int64)) for i in ix])
        y = torch.stack(
            [torch.from_numpy((data[i + 1 : i + 1 + block_size]).astype(np.int64)) for i in ix]
        )
        return x.to(device, non_blocking=True), y.to(device, non_blocking=True)

    model = torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Linear(16, vocab))
    model.to(device)
    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95))
    model = torch.compile(model)
    raw_model = model.module if ddp else model
    losses = []
    for it in range(30):
        for group in optimizer.param_groups:
            group["lr"] = 1e-2 * min(1.0, (it + 1) / 5)
        X, Y = get_batch()
        with ctx:
            logits = model(X)
            loss = F.cross_entropy(logits.view(-1, vocab), Y.view(-1), ignore_index=-1)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
    assert losses[-1] < losses[0] - 0.5, losses
    torch.save({"model": raw_model.state_dict(), "optimizer": optimizer.state_dict(),
                "iter_num": 30, "best_val_loss": losses[-1]}, "ckpt.pt")  # fmt: skip
    checkpoint_file = torch.load("ckpt.pt", map_location=device)
    resumed = torch.nn.Sequential(torch.nn.Embedding(vocab, 16), torch.nn.Linear(16, vocab))
    resumed.load_state_dict(checkpoint_file["model"])
    X, _ = get_batch()
    np.testing.assert_array_equal(resumed(X).numpy(), raw_model(X).numpy())
    assert checkpoint_file["iter_num"] == 30
    print(f"iter 30: loss {losses[-1]:.4f}")  # (a 0-d float formats, as scripts print it)
