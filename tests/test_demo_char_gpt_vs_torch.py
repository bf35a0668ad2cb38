"""demos/06_train_char_gpt.py against PyTorch itself: the script's source run twice, once as it
is and once with its import lines pointing at torch (tests/pytorch_models.py), and each side's
checkpoint loaded by the other into the same GPT class, giving the same logits (float32, 1e-5).
The optimizer's and scheduler's states load across too, and one more AdamW step from them agrees;
the random state does not (PyTorch's is a Mersenne Twister, ours NumPy's PCG64).
Skipped where torch is not installed (it is never a dependency).
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pytorch_models import load_model, swap_imports  # noqa: E402

import tinygrad_attn as ta  # noqa: E402

DEMO = Path(__file__).resolve().parent.parent / "demos" / "06_train_char_gpt.py"
TINY = ["--block-size", "8", "--batch-size", "8", "--n-embd", "16", "--n-layer", "1"]
TINY += ["--eval-iters", "2", "--sample-tokens", "5", "--steps", "4"]


@pytest.fixture(scope="module")
def modules():
    source = DEMO.read_text(encoding="utf-8")
    swapped, changed = swap_imports(source, "torch")
    differ = [new for old, new in zip(source.splitlines(), swapped.splitlines()) if old != new]
    assert changed == 4 and differ == [  # only the four import lines change
        "import torch",
        "import torch.nn as nn",
        "import torch.nn.functional as F",
        "from torch.utils.data import DataLoader, Dataset",
    ]
    return load_model(DEMO, "tinygrad_attn", "char_gpt"), load_model(DEMO, "torch", "char_gpt")


def train(module, out: Path) -> dict:
    with contextlib.redirect_stdout(io.StringIO()):
        return module.main([*TINY, "--out", str(out)])


def logits_of(model, idx: np.ndarray, library) -> np.ndarray:
    with library.no_grad():
        logits, _ = model.eval()(library.tensor(idx, dtype=library.long))
    return logits.numpy()


def one_adamw_step(module, library, ckpt: dict, batch) -> dict:
    """A fresh model, optimizer and scheduler of the script's kind, their states from `ckpt`,
    then one optimizer step on `batch` without dropout: the weights after it."""
    model = module.GPT(**ckpt["config"], dropout=0.0)
    model.load_state_dict(ckpt["model"])
    optimizer = library.optim.AdamW(model.parameters(), lr=1.0, weight_decay=0.1)
    optimizer.load_state_dict(ckpt["optimizer"])
    scheduler = library.optim.lr_scheduler.LambdaLR(optimizer, lambda it: 1.0)
    scheduler.load_state_dict(ckpt["scheduler"])
    x, y = (library.tensor(a, dtype=library.long) for a in batch)
    _, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return {name: p.detach().numpy().copy() for name, p in model.named_parameters()}


def test_our_checkpoint_loads_in_pytorch_into_the_same_class(modules, tmp_path):
    ours, theirs = modules
    result = train(ours, tmp_path)
    path = tmp_path / "char_gpt.pt"
    ckpt = torch.load(path, weights_only=True)
    assert ckpt["step"] == 4 and isinstance(ckpt["config"], dict)
    model = theirs.GPT(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    idx = np.random.default_rng(0).integers(0, ckpt["config"]["vocab_size"], (3, 8))
    expected = logits_of(result["model"], idx, ta)
    np.testing.assert_allclose(logits_of(model, idx, torch), expected, rtol=0, atol=1e-5)

    batch = np.random.default_rng(1).integers(0, ckpt["config"]["vocab_size"], (2, 2, 8))
    after_torch = one_adamw_step(theirs, torch, ckpt, batch)
    after_ours = one_adamw_step(ours, ta, ta.load(path, weights_only=True), batch)
    for name, value in after_ours.items():
        np.testing.assert_allclose(after_torch[name], value, rtol=0, atol=1e-5, err_msg=name)
    with pytest.raises(RuntimeError):  # the random state is NumPy's, not PyTorch's
        torch.set_rng_state(ckpt["rng"])


def test_a_pytorch_trained_checkpoint_loads_here_into_the_same_class(modules, tmp_path):
    ours, theirs = modules
    result = train(theirs, tmp_path)
    ckpt = ta.load(tmp_path / "char_gpt.pt", weights_only=True)
    assert ckpt["step"] == 4 and ckpt["chars"] == "".join(sorted(set(ours.load_text())))
    model = ours.GPT(**ckpt["config"])
    model.load_state_dict(ckpt["model"])
    idx = np.random.default_rng(0).integers(0, ckpt["config"]["vocab_size"], (3, 8))
    expected = logits_of(result["model"], idx, torch)
    np.testing.assert_allclose(logits_of(model, idx, ta), expected, rtol=0, atol=1e-5)

    batch = np.random.default_rng(1).integers(0, ckpt["config"]["vocab_size"], (2, 2, 8))
    after_ours = one_adamw_step(ours, ta, ckpt, batch)
    after_torch = one_adamw_step(
        theirs, torch, torch.load(tmp_path / "char_gpt.pt", weights_only=True), batch
    )
    for name, value in after_torch.items():
        np.testing.assert_allclose(after_ours[name], value, rtol=0, atol=1e-5, err_msg=name)
    with pytest.raises(ValueError, match="5056"):  # PyTorch's Mersenne Twister state
        ta.set_rng_state(ckpt["rng"])
