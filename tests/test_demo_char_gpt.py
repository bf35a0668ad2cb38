"""demos/06_train_char_gpt.py, idiom by idiom: the script run as a subprocess, its val loss
falling, its checkpoint in PyTorch's zip format with the keys it writes, a reload giving the same
logits bit for bit, `--resume` ending at the weights of one uninterrupted run, the `cuda` check,
the `randint` evaluation batches, the `Dataset`/`DataLoader` training batches and sampling.

Tiny settings throughout, so the whole module runs in a few seconds. The same script under real
PyTorch is tests/test_demo_char_gpt_vs_torch.py (skipped without torch).
"""

from __future__ import annotations

import runpy
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as ta

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "demos" / "06_train_char_gpt.py"
# one layer of width 16, 8 characters of context: a step takes a few milliseconds
TINY = ["--block-size", "8", "--batch-size", "8", "--n-embd", "16", "--n-layer", "1"]
TINY += ["--eval-iters", "2", "--sample-tokens", "12"]
CHECKPOINT_KEYS = {"model", "optimizer", "scheduler", "step", "config", "chars", "rng"}


@pytest.fixture(scope="module")
def demo() -> dict:
    """The script's functions and classes (its file run without calling main)."""
    return runpy.run_path(str(DEMO), run_name="char_gpt_under_test")


def run_main(demo: dict, out: Path, *argv: str, capsys=None) -> dict:
    result = demo["main"]([*TINY, "--out", str(out), *argv])
    if capsys is not None:
        result["printed"] = capsys.readouterr().out
    return result


def run_script(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(DEMO), *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )


def arrays(state: dict) -> dict:
    return {name: value.numpy().copy() for name, value in state.items()}


# ----------------------------------------------------------------------- the script as a script
def test_the_script_runs_end_to_end_and_writes_only_under_out(tmp_path):
    done = run_script(tmp_path, "--steps", "5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("step 0: train loss ") and ", val loss " in lines[0]
    assert lines[1].startswith("step 5: train loss ")
    assert lines[2].startswith("val loss, trained model ")
    trained, reloaded = lines[2].split()[4].rstrip(";"), lines[2].split()[-1]
    assert trained == reloaded
    assert lines[3] == "sample:" and lines[4].startswith("The ")
    assert len("\n".join(lines[4:])) == len("The ") + 200
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["char_gpt.pt"]


def test_the_val_loss_falls_in_a_short_real_run(demo, tmp_path, capsys):
    result = run_main(demo, tmp_path, "--steps", "60", "--eval-interval", "30", capsys=capsys)
    history = result["history"]
    assert sorted(history) == [0, 30, 60]
    assert history[0][1] > np.log(len(demo["make_codec"](demo["load_text"]())[0])) - 0.1
    assert history[60][1] < history[0][1] - 0.5
    assert history[60][0] < history[30][0] < history[0][0]
    train, val = history[60]
    assert f"step 60: train loss {train:.4f}, val loss {val:.4f}" in result["printed"]


# ----------------------------------------------------------------------- checkpoints
def test_the_checkpoint_is_pytorchs_zip_file_with_the_keys_written(demo, tmp_path, capsys):
    result = run_main(demo, tmp_path, "--steps", "3", capsys=capsys)
    path = tmp_path / "char_gpt.pt"
    assert zipfile.is_zipfile(path)
    with zipfile.ZipFile(path) as archive:
        assert any(name.endswith("/data.pkl") for name in archive.namelist())
    ckpt = ta.load(path, weights_only=True)
    assert set(ckpt) == CHECKPOINT_KEYS
    assert ckpt["step"] == 3 and ckpt["scheduler"]["last_epoch"] == 3
    assert ckpt["config"] == dict(vocab_size=len(ckpt["chars"]), block_size=8, n_embd=16, n_layer=1)
    assert ckpt["chars"] == "".join(sorted(set(demo["load_text"]())))
    assert ckpt["rng"].dtype == ta.uint8
    model_state = result["model"].state_dict()
    assert list(ckpt["model"]) == list(model_state)
    assert "blocks.0.attn.tril" in ckpt["model"]  # the registered buffer travels too
    for name, value in model_state.items():
        assert np.array_equal(ckpt["model"][name].numpy(), value.numpy()), name
    assert ckpt["optimizer"]["state"][0]["step"].item() == 3


def test_a_fresh_model_from_the_checkpoint_gives_the_same_logits_bit_for_bit(demo, tmp_path):
    result = run_main(demo, tmp_path, "--steps", "4")
    ckpt = ta.load(tmp_path / "char_gpt.pt", weights_only=True)
    fresh = demo["GPT"](**ckpt["config"])
    fresh.load_state_dict(ckpt["model"])
    idx = ta.randint(len(ckpt["chars"]), (3, 8))
    trained_logits, _ = result["model"].eval()(idx)
    fresh_logits, _ = fresh.eval()(idx)
    assert np.array_equal(trained_logits.numpy(), fresh_logits.numpy())
    assert result["val_losses"][0] == result["val_losses"][1]


def test_resume_ends_at_the_weights_of_one_uninterrupted_run(demo, tmp_path):
    """Steps 0-20 straight, against steps 0-10, a checkpoint, and 10-20 in a new process. Batches
    of 512 windows make an epoch 9 steps long, so the checkpoint is inside the second epoch and
    the resumed half crosses into the third;
    dropout draws from the global stream, which the checkpoint carries. Every run is a process
    of its own with the script's one BLAS thread: with another thread count a matrix product may
    sum in another order, and the last bits differ (in PyTorch too)."""
    settings = [*TINY, "--batch-size", "512", "--eval-interval", "10", "--eval-iters", "1"]
    straight, split = tmp_path / "straight", tmp_path / "split"
    for out, argv in ((straight, ["--steps", "20"]), (split, ["--steps", "10"])):
        assert run_script(ROOT, *settings, *argv, "--out", str(out)).returncode == 0
    done = run_script(ROOT, *settings, "--steps", "20", "--out", str(split), "--resume")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"resumed from {split / 'char_gpt.pt'} at step 10\nstep 20:")
    one = ta.load(straight / "char_gpt.pt", weights_only=True)
    two = ta.load(split / "char_gpt.pt", weights_only=True)
    assert one["step"] == two["step"] == 20
    for name, value in arrays(one["model"]).items():
        assert np.array_equal(value, two["model"][name].numpy()), name
    for index, state in one["optimizer"]["state"].items():
        for key in ("exp_avg", "exp_avg_sq"):
            assert np.array_equal(state[key].numpy(), two["optimizer"]["state"][index][key].numpy())
    assert one["scheduler"] == two["scheduler"]
    assert np.array_equal(one["rng"].numpy(), two["rng"].numpy())


def test_training_batches_from_a_step_are_the_batches_a_straight_run_sees_there(demo):
    data = ta.arange(40)
    loader = ta.utils.data.DataLoader(
        demo["CharChunks"](data, 4),
        batch_size=5,
        shuffle=True,
        drop_last=True,
        generator=ta.Generator().manual_seed(0),
    )
    assert len(loader) == 7  # 36 windows, the last batch of 1 dropped

    def take(step, count):
        batches = demo["training_batches"](loader, 7, step)
        return [next(batches)[0].numpy().copy() for _ in range(count)]

    straight = take(0, 20)  # nearly three epochs
    assert not np.array_equal(straight[0], straight[7])  # each epoch its own order
    for step in (3, 7, 10):
        resumed = take(step, 20 - step)
        assert all(np.array_equal(a, b) for a, b in zip(straight[step:], resumed))


# ----------------------------------------------------------------------- the pieces
def test_the_cuda_check_picks_the_cpu(demo, tmp_path):
    assert demo["device"] == "cpu"
    model = run_main(demo, tmp_path, "--steps", "1")["model"]
    assert {p.device.type for p in model.parameters()} == {"cpu"}


def test_text_codec_and_the_90_10_split(demo):
    text = demo["load_text"]()
    assert len(text) > 5000 and "orange" in text
    chars, encode, decode = demo["make_codec"](text)
    assert chars == sorted(set(text))
    assert decode(encode(text)) == text
    data = ta.tensor(encode(text), dtype=ta.long)
    assert data.dtype == ta.int64 and data.shape == (len(text),)


def test_randint_batches_are_windows_and_their_next_characters(demo):
    data = ta.arange(100) * 3
    ta.manual_seed(0)
    x, y = demo["get_batch"](data, 8, 5)
    assert x.shape == y.shape == (5, 8) and x.dtype == y.dtype == ta.int64
    starts = x.numpy()[:, 0] // 3
    assert np.all(starts <= 100 - 8 - 1)
    for row, start in zip(x.numpy(), starts):
        assert np.array_equal(row, data.numpy()[start : start + 8])
    assert np.array_equal(y.numpy(), x.numpy() + 3)


def test_dataset_items_and_loader_batches(demo):
    data = ta.arange(20)
    chunks = demo["CharChunks"](data, 6)
    assert len(chunks) == 14
    x, y = chunks[13]
    assert x.tolist() == list(range(13, 19)) and y.tolist() == list(range(14, 20))
    loader = ta.utils.data.DataLoader(chunks, batch_size=4, shuffle=True, drop_last=True)
    batches = list(loader)
    assert len(batches) == 3 and all(xb.shape == yb.shape == (4, 6) for xb, yb in batches)
    assert all(np.array_equal(yb.numpy(), xb.numpy() + 1) for xb, yb in batches)


def test_estimate_loss_uses_no_grad_and_puts_the_model_back_in_training(demo):
    ta.manual_seed(0)
    model = demo["GPT"](10, block_size=4, n_embd=8, n_head=2, n_layer=1)
    data = ta.randint(10, (50,))
    losses = demo["estimate_loss"](model, {"train": data, "val": data[:20]}, 4, 3, 2)
    assert set(losses) == {"train", "val"} and model.training
    assert losses["val"].shape == () and not losses["val"].requires_grad
    assert f"{losses['val']:.4f}" == f"{losses['val'].item():.4f}"
    assert all(p.grad is None for p in model.parameters())


def test_forward_gives_logits_and_the_cross_entropy_loss(demo):
    ta.manual_seed(0)
    model = demo["GPT"](10, block_size=4, n_embd=8, n_head=2, n_layer=1).eval()
    idx, targets = ta.randint(10, (2, 4)), ta.randint(10, (2, 4))
    logits, loss = model(idx, targets)
    assert logits.shape == (2, 4, 10) and model(idx)[1] is None
    log_p = logits.numpy() - np.log(np.exp(logits.numpy()).sum(-1, keepdims=True))
    picked = np.take_along_axis(log_p, targets.numpy()[..., None], -1)
    assert np.isclose(loss.item(), -picked.mean(), rtol=1e-6)
    # causal: changing the last token leaves the logits of the earlier positions alone
    changed = idx.clone()
    changed[:, -1] = (idx[:, -1] + 1) % 10
    assert np.array_equal(model(changed)[0].numpy()[:, :3], logits.numpy()[:, :3])


def test_init_weights_draws_normal_weights_and_zero_biases(demo):
    ta.manual_seed(0)
    model = demo["GPT"](60, n_embd=64, n_layer=1)
    assert np.all(model.lm_head.bias.numpy() == 0)
    assert abs(model.tok_emb.weight.numpy().std() - 0.02) < 0.002
    assert np.all(model.blocks[0].ln1.weight.numpy() == 1)  # LayerNorm keeps its own init


def test_sampling_returns_the_tokens_asked_for_all_in_the_vocabulary(demo):
    ta.manual_seed(0)
    model = demo["GPT"](7, block_size=4, n_embd=8, n_head=2, n_layer=1).eval()
    context = ta.tensor([[1, 2, 3]], dtype=ta.long)
    out = model.generate(context, max_new_tokens=9)
    assert out.shape == (1, 12) and out.dtype == ta.int64
    assert out[0, :3].tolist() == [1, 2, 3]
    assert all(0 <= t < 7 for t in out[0].tolist())
    assert not out.requires_grad
