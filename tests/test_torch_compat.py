"""The same PyTorch-style model under PyTorch and under tinygrad_attn: equal loss, gradients and
AdamW steps in float64 (skipped without torch).

Two models: demos/05_nanogpt_style.py (ours, shipped) and, when the environment variable
NANOGPT_MODEL_PY names a copy of karpathy/nanoGPT's model.py (not shipped), that file too. Each
runs with only its import lines changed.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import numpy as np
import pytest
from pytorch_models import DEMO, load_model, swap_imports

torch = pytest.importorskip("torch")

import tinygrad_attn as ta  # noqa: E402

RTOL = 1e-7


@pytest.fixture
def float64():
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ta.set_default_dtype(previous)
    torch.set_default_dtype(torch.float32)


def compare(ours_module, torch_module, make_model, batch, optimizer):
    """Build both models, give ours the PyTorch weights through load_state_dict (tied weights
    included), then compare loss, every gradient, and the weights after 5 optimizer steps."""
    torch.manual_seed(0)
    theirs = make_model(torch_module)
    ours = make_model(ours_module)
    ours.load_state_dict(theirs.state_dict())  # PyTorch's own state_dict, tied keys and all
    back = {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()}  # (tensors now)
    assert list(back) == list(theirs.state_dict())  # the same keys, in the same order
    theirs.load_state_dict(back)  # and the other way round
    x, y = batch
    _, loss_t = theirs(torch.tensor(x), torch.tensor(y))
    _, loss_o = ours(ta.tensor(x), ta.tensor(y))
    np.testing.assert_allclose(loss_o.item(), loss_t.item(), rtol=RTOL)
    loss_t.backward()
    loss_o.backward()
    grads_t = {n: p.grad.numpy() for n, p in theirs.named_parameters()}
    grads_o = {n: p.grad for n, p in ours.named_parameters()}
    assert grads_o.keys() == grads_t.keys()
    for name in grads_t:
        np.testing.assert_allclose(grads_o[name], grads_t[name], rtol=RTOL, atol=1e-12)
    opt_t, opt_o = optimizer(theirs), optimizer(ours)
    for _ in range(5):
        for model, opt, lib in ((theirs, opt_t, torch), (ours, opt_o, ta)):
            opt.zero_grad(set_to_none=True)
            _, loss = model(lib.tensor(x), lib.tensor(y))
            loss.backward()
            opt.step()
    final_t = {n: p.detach().numpy() for n, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.numpy(), final_t[name], rtol=RTOL, atol=1e-12)
    return ours, theirs


def test_demo_model_matches_pytorch(float64):
    ours_module = load_model(DEMO, "tinygrad_attn")
    torch_module = load_model(DEMO, "torch")
    cfg = dict(block_size=8, vocab_size=13, n_layer=2, n_head=2, n_embd=8)
    rng = np.random.default_rng(0)
    batch = rng.integers(0, 13, (3, 8)), rng.integers(0, 13, (3, 8))
    ours, _ = compare(
        ours_module,
        torch_module,
        lambda m: m.TinyGPT(m.Config(**cfg)),
        batch,
        lambda model: model.optimizer(lr=1e-2, weight_decay=0.1),
    )
    assert ours.head.weight is ours.body.tok.weight  # tying survived load_state_dict


NANOGPT = os.environ.get("NANOGPT_MODEL_PY")


@pytest.mark.skipif(not NANOGPT, reason="set NANOGPT_MODEL_PY to a copy of nanoGPT's model.py")
@pytest.mark.parametrize("flash", [True, False], ids=["sdpa", "manual-attention"])
def test_nanogpt_model_py_matches_pytorch(float64, flash, monkeypatch, capsys):
    path = Path(NANOGPT)
    _, changed = swap_imports(path.read_text(encoding="utf-8"), "tinygrad_attn")
    assert changed == 3  # only the three import lines
    ours_module = load_model(path, "tinygrad_attn", "nanogpt")
    torch_module = load_model(path, "torch", "nanogpt")
    if "ignore_index" not in inspect.signature(ta.functional.cross_entropy).parameters:
        pytest.skip("F.cross_entropy(ignore_index=) is not merged yet")
    if not flash:  # the model checks hasattr(F, "scaled_dot_product_attention") at construction
        monkeypatch.delattr(ta.functional, "scaled_dot_product_attention")
        monkeypatch.delattr(torch.nn.functional, "scaled_dot_product_attention")
    cfg = dict(block_size=8, vocab_size=11, n_layer=2, n_head=2, n_embd=8, dropout=0.0)
    rng = np.random.default_rng(1)
    batch = rng.integers(0, 11, (2, 8)), rng.integers(0, 11, (2, 8))
    ours, _ = compare(
        ours_module,
        torch_module,
        lambda m: m.GPT(m.GPTConfig(**cfg, bias=True)),
        batch,
        lambda model: model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu"),
    )
    monkeypatch.undo()
    ours.eval()
    ta.manual_seed(0)
    out = ours.generate(ta.tensor(batch[0][:, :3]), 6, top_k=4)
    assert out.shape == (2, 9) and out.dtype == np.int64
    assert "number of parameters" in capsys.readouterr().out
