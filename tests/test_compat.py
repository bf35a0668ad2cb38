"""PyTorch spellings: the collision rules (size, transpose, max), dim=/keepdim=, the new
methods and constructors, NumPy functions on Tensors, devices, item assignment, and nn's
Parameter / ModuleDict / buffers / apply / init / state_dict in PyTorch's layout."""

import pickle
import sys

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor, nn


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape):
    return Tensor(rng.standard_normal(shape), requires_grad=True)


# ------------------------------------------------------------------ the collision rules
def test_size_is_numpys_int_and_pytorchs_method():
    t = ta.zeros(2, 3, 4)
    assert t.size == 24 and isinstance(t.size, int) and t.size * 2 == 48
    assert t.size() == (2, 3, 4) and t.size(1) == 3 and t.size(-1) == 4
    B, T, C = t.size()
    assert (B, T, C) == (2, 3, 4)
    with pytest.raises(ValueError, match=r"size\(3\): no such axis in shape \(2, 3, 4\)"):
        t.size(3)
    assert t.numel() == 24 and t.dim() == 3 and t.nelement() == 24


def test_transpose_two_ints_swap_tuples_permute(rng):
    a = rng.standard_normal((2, 3, 4, 5))
    t = Tensor(a)
    np.testing.assert_array_equal(t.transpose(1, 2).numpy(), np.swapaxes(a, 1, 2))
    np.testing.assert_array_equal(t.transpose(-2, -1).numpy(), np.swapaxes(a, -2, -1))
    np.testing.assert_array_equal(t.transpose((0, 2, 1, 3)).numpy(), a.transpose(0, 2, 1, 3))
    np.testing.assert_array_equal(t.transpose(3, 2, 1, 0).numpy(), a.transpose(3, 2, 1, 0))
    np.testing.assert_array_equal(t.transpose().numpy(), a.T)
    m = rng.standard_normal((2, 3))
    # 2-D: PyTorch's transpose(0, 1) swaps (NumPy's permutation (0, 1) would not); (1, 0)
    # means the same in both; a permutation tuple keeps NumPy's meaning.
    np.testing.assert_array_equal(Tensor(m).transpose(0, 1).numpy(), m.T)
    np.testing.assert_array_equal(Tensor(m).transpose(1, 0).numpy(), m.T)
    np.testing.assert_array_equal(Tensor(m).transpose((0, 1)).numpy(), m)
    np.testing.assert_array_equal(Tensor(a).permute(0, 2, 1, 3).numpy(), a.transpose(0, 2, 1, 3))


def test_max_and_min_forms(rng):
    a = rng.standard_normal((3, 4))
    t = Tensor(a)
    np.testing.assert_array_equal(t.max(axis=1).values.numpy(), a.max(axis=1))  # axis= is dim=
    np.testing.assert_array_equal(np.max(t, axis=1).numpy(), a.max(axis=1))  # NumPy's own
    assert t.max().item() == a.max()
    values, indices = t.max(1)
    np.testing.assert_array_equal(values.numpy(), a.max(1))
    np.testing.assert_array_equal(indices.numpy(), a.argmax(1))
    out = t.min(dim=0, keepdim=True)
    np.testing.assert_array_equal(out.values.numpy(), a.min(0, keepdims=True))
    np.testing.assert_array_equal(t.max(Tensor(np.zeros((3, 4)))).numpy(), np.maximum(a, 0))
    np.testing.assert_array_equal(t.amin(0).numpy(), a.min(0))


def test_dim_and_keepdim_everywhere(rng):
    a = rng.standard_normal((2, 3, 4))
    t = Tensor(a)
    np.testing.assert_allclose(t.sum(dim=1, keepdim=True).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_allclose(t.mean(dim=(0, 2)).numpy(), a.mean((0, 2)))
    np.testing.assert_allclose(t.var(dim=-1).numpy(), a.var(-1, ddof=1))  # PyTorch: unbiased
    np.testing.assert_allclose(t.var(axis=-1).numpy(), a.var(-1, ddof=1))  # axis= is dim=
    np.testing.assert_allclose(t.std(-1, keepdim=True).numpy(), a.std(-1, ddof=1, keepdims=True))
    np.testing.assert_allclose(np.var(t, axis=-1).numpy(), a.var(-1))  # NumPy's own: ddof=0
    np.testing.assert_allclose(t.std(dim=0, unbiased=False).numpy(), a.std(0))
    np.testing.assert_allclose(t.prod(dim=2).numpy(), a.prod(2))
    np.testing.assert_allclose(t.softmax(dim=0).numpy().sum(0), np.ones((3, 4)))
    np.testing.assert_allclose(ta.functional.softmax(t, dim=-1).numpy().sum(-1), np.ones((2, 3)))
    np.testing.assert_allclose(
        t.log_softmax(dim=1).numpy(), ta.functional.log_softmax(t, 1).numpy()
    )
    np.testing.assert_array_equal(t.argmax(dim=-1).numpy(), a.argmax(-1))
    with pytest.raises(TypeError, match="dim= or axis=, not both"):
        t.sum(axis=0, dim=0)


# ------------------------------------------------------------- methods and constructors
def test_shape_methods(rng):
    a = rng.standard_normal((2, 6))
    t = Tensor(a)
    q, k, v = t.split(2, dim=1)
    np.testing.assert_array_equal(k.numpy(), a[:, 2:4])
    assert [p.shape for p in t.split([1, 5], dim=1)] == [(2, 1), (2, 5)]
    assert [p.shape for p in t.chunk(4, dim=1)] == [(2, 2), (2, 2), (2, 2)]
    assert t.view(3, 4).shape == (3, 4) and t.view(-1).shape == (12,)
    assert t.flatten().shape == (12,) and Tensor(np.ones((2, 3, 4))).flatten(1).shape == (2, 12)
    assert t.contiguous() is t and t.unsqueeze(0).expand(3, -1, -1).shape == (3, 2, 6)
    assert Tensor(np.ones((2, 3, 4))).moveaxis(0, -1).shape == (3, 4, 2)
    np.testing.assert_array_equal(t.flip(1).numpy(), a[:, ::-1])
    np.testing.assert_array_equal(t.repeat(2, 1).numpy(), np.tile(a, (2, 1)))
    np.testing.assert_array_equal(t.tril().numpy(), np.tril(a))
    np.testing.assert_array_equal(ta.triu(t, 1).numpy(), np.triu(a, 1))
    assert t.clone().numpy() is not t.numpy() and t.t().shape == (6, 2)


def test_dtype_conversions_and_devices(rng):
    x = leaf(rng, 3)
    assert x.float().dtype == np.float32 and x.to(ta.float32).dtype == ta.float32
    assert x.double() is x and x.to("cpu") is x and x.long().dtype == ta.long
    y = x.float()
    y.sum().backward()
    assert x.grad.dtype == np.float64  # the cast is in the graph
    assert x.device == "cpu" and x.device == ta.device("cpu") and str(x.device) == "cpu"
    assert ta.zeros(2, device="cpu").shape == (2,)
    for make in (lambda: x.to("cuda"), lambda: ta.ones(2, device="cuda"), lambda: x.cuda()):
        with pytest.raises(ValueError, match="CPU only"):
            make()
    assert float(Tensor(2.5)) == 2.5 and int(Tensor(3)) == 3
    np.testing.assert_array_equal(abs(Tensor([-1.0, 2.0])).numpy(), [1.0, 2.0])


def test_tensor_function_and_tensor_module_both_work():
    t = ta.tensor([1.0, 2.0], requires_grad=True)
    assert isinstance(t, Tensor) and t.requires_grad and t.dtype == np.float32
    module = sys.modules["tinygrad_attn.tensor"]
    assert module.Tensor is Tensor
    from tinygrad_attn.tensor import Tensor as Imported

    assert Imported is Tensor


def test_constructors(rng):
    t = Tensor(rng.standard_normal((2, 3)))
    assert ta.zeros_like(t).shape == (2, 3) and ta.ones_like(t).dtype == t.dtype
    np.testing.assert_array_equal(ta.full((2, 2), 7.0).numpy(), np.full((2, 2), 7.0))
    assert ta.full(3, 1.5).dtype == np.float32
    np.testing.assert_array_equal(ta.cat((t, t), dim=1).numpy(), np.concatenate([t.numpy()] * 2, 1))
    ta.manual_seed(3)
    probs = Tensor(np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]]))
    draws = ta.multinomial(probs, num_samples=1)
    assert draws.shape == (2, 1) and draws.dtype == np.int64 and draws.numpy()[0, 0] == 1
    assert draws.numpy()[1, 0] in (0, 2)
    values, indices = ta.topk(t, 2)
    np.testing.assert_array_equal(values.numpy(), -np.sort(-t.numpy(), axis=-1)[:, :2])
    np.testing.assert_array_equal(indices.numpy(), np.argsort(-t.numpy(), axis=-1)[:, :2])


def test_topk_values_carry_gradients(rng):
    x = leaf(rng, 2, 5)
    values, _ = x.topk(2)
    values.sum().backward()
    expected = np.zeros((2, 5))
    np.put_along_axis(expected, np.argsort(-x.numpy(), axis=-1)[:, :2], 1.0, axis=-1)
    np.testing.assert_array_equal(x.grad, expected)


def test_item_assignment_as_pytorch(rng):
    x = leaf(rng, 4)
    with ta.no_grad():
        logits = x * 2
        logits[logits < 0] = -float("inf")
    assert np.all((logits.numpy() == -np.inf) | (logits.numpy() >= 0))
    with pytest.raises(RuntimeError, match="leaf that requires grad.*no_grad"):
        x[0] = 1.0
    y = x * 3
    y[0] = 1.0  # a tensor of a graph: recorded (CopySlices), the gradient of y[0] is gone
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [0.0, 3.0, 3.0, 3.0])
    x.grad = None
    held = x * 1.0
    z = held * held  # Mul saved `held`
    with ta.no_grad():
        held[0] = 100.0  # written in place: the values Mul saved are gone
    with pytest.raises(RuntimeError, match="Mul saved its input 0.*modified by an inplace"):
        z.sum().backward()


# ------------------------------------------------------------- NumPy functions on Tensors
def test_numpy_functions_record_the_op(rng):
    x = leaf(rng, 3, 4)
    for out in (np.exp(x), np.maximum(x, 0), np.sum(x, axis=0), np.mean(x), x.numpy() + x):
        assert isinstance(out, Tensor) and out.grad_fn is not None
    np.sum(np.exp(x), axis=0).sum().backward()
    np.testing.assert_allclose(x.grad, np.exp(x.numpy()))
    np.testing.assert_array_equal(np.concatenate([x, x]).numpy(), np.concatenate([x.numpy()] * 2))
    assert np.asarray(x) is x.numpy()


def test_numpy_functions_without_a_method_refuse_to_drop_the_graph(rng):
    x = leaf(rng, 3)
    with pytest.raises(TypeError, match=r"np.arctan .*drop the graph.*Tensor method"):
        np.arctan(x)
    with pytest.raises(TypeError, match="np.cross"):
        np.cross(x, x)
    assert np.allclose(x, x.numpy()) and np.isfinite(x).all()  # no float result: fine
    np.testing.assert_allclose(np.arctan(x.detach()), np.arctan(x.numpy()))
    with pytest.raises(TypeError, match="out="):
        np.exp(x, out=np.empty(3))


# ------------------------------------------------------------------------ nn, PyTorch's way
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleDict(dict(emb=nn.Embedding(5, 3), out=nn.Linear(3, 5, bias=False)))
        self.layers.emb.weight = self.layers.out.weight  # tied
        self.scale = nn.Parameter(ta.ones(3))
        self.register_buffer("mask", ta.tril(ta.ones(4, 4)))


def test_parameters_buffers_and_tied_state_dict():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "layers.emb.weight"]
    state = net.state_dict()
    assert list(state) == ["scale", "mask", "layers.emb.weight", "layers.out.weight"]
    assert [n for n, _ in net.named_buffers()] == ["mask"]
    assert not net.mask.requires_grad and "mask" not in names
    fresh = Net()
    state["layers.out.weight"] = state["layers.out.weight"] + 1
    state["layers.emb.weight"] = state["layers.out.weight"]
    fresh.load_state_dict(state)
    np.testing.assert_array_equal(fresh.layers.emb.weight.numpy(), state["layers.out.weight"])
    assert fresh.layers.emb.weight is fresh.layers.out.weight
    frozen = nn.Parameter(ta.ones(2), requires_grad=False)
    net.frozen = frozen
    assert "frozen" in dict(net.named_parameters())


def test_load_state_dict_is_all_or_nothing():
    net = Net()
    before = net.state_dict()
    bad = dict(before)
    bad["scale"] = np.zeros(3) + 5
    bad["layers.out.weight"] = np.array([["a"] * 3] * 5)  # the last entry is wrong
    with pytest.raises(ValueError, match=r"layers.out.weight: holds dtype <U1"):
        net.load_state_dict(bad)
    np.testing.assert_array_equal(net.scale.numpy(), before["scale"])
    bad["layers.out.weight"] = [[1.0, 2.0], [3.0]]  # ragged
    bad["layers.emb.weight"] = before["layers.emb.weight"]
    with pytest.raises(ValueError, match="layers.out.weight: cannot be read as an array"):
        net.load_state_dict(bad)
    np.testing.assert_array_equal(net.scale.numpy(), before["scale"])


def test_module_apply_and_init_are_seeded():
    def init(module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Embedding):
            nn.init.zeros_(module.weight)

    seen = []
    net = Net()
    ta.manual_seed(1)
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Embedding", "Linear", "ModuleDict", "Net"]
    ta.manual_seed(1)
    a = Net().apply(init).layers.out.weight.numpy().copy()
    ta.manual_seed(1)
    b = Net().apply(init).layers.out.weight.numpy().copy()
    # children first, in order: the Embedding zeroes the shared weight, then the Linear draws
    np.testing.assert_array_equal(a, b)
    assert 0 < a.std() < 0.05
    w = Tensor(np.empty((4, 3)), requires_grad=True)
    ta.manual_seed(2)
    nn.init.xavier_uniform_(w)
    first = w.numpy().copy()
    ta.manual_seed(2)
    nn.init.xavier_uniform_(w)
    np.testing.assert_array_equal(w.numpy(), first)
    assert np.abs(first).max() <= np.sqrt(6 / 7)
    nn.init.kaiming_uniform_(w)
    nn.init.ones_(w)
    np.testing.assert_array_equal(w.numpy(), np.ones((4, 3)))


def test_module_dict_and_pickle():
    d = nn.ModuleDict({"a": nn.Linear(2, 2)})
    d["b"] = nn.ReLU()
    assert list(d) == ["a", "b"] and "a" in d and len(d) == 2 and d["a"].weight.name == "a.weight"
    with pytest.raises(KeyError, match="has no key 'c'"):
        d["c"]
    clone = pickle.loads(pickle.dumps(Net()))
    assert list(clone.state_dict()) == list(Net().state_dict())


def test_sdpa_dropout_p_drops_attention_weights(rng):
    q = leaf(rng, 1, 4, 3)
    ta.manual_seed(0)
    dropped = ta.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5, is_causal=True)
    plain = ta.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
    assert dropped.shape == plain.shape and not np.allclose(dropped.numpy(), plain.numpy())
    dropped.sum().backward()
    assert q.grad.shape == q.shape


# ---------------------------------------------------------------- README and demo 05
def test_readme_coming_from_pytorch_blocks_run():
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Coming from PyTorch", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    # the imports, one meaning per name, views and in-place, the torch.* functions, loading data
    assert len(blocks) == 5
    for block in blocks:
        exec(compile(block, "README.md (Coming from PyTorch)", "exec"), {})


def test_demo_05_trains_samples_draws_and_replays(tmp_path, capsys):
    from pytorch_models import DEMO, load_model

    demo = load_model(DEMO, "tinygrad_attn", "demo05_run")
    first, last = demo.main(steps=30, out=str(tmp_path))
    assert last < first - 0.5  # from about log(vocab) = 3.5 towards the text's statistics
    out = capsys.readouterr().out
    assert "sample: 'The " in out
    svg = (tmp_path / "nanogpt_graph.svg").read_text()
    assert "body.blocks.0.attn" in svg and "#" in svg
    assert "ScaledDotProductAttention" in (tmp_path / "nanogpt_backward.html").read_text()


def test_module_to_and_requires_grad_():
    net = Net()
    assert net.to("cpu") is net
    net.to(np.float64)
    assert net.scale.dtype == np.float64 and net.mask.dtype == np.float64
    with pytest.raises(ValueError, match="CPU only"):
        net.to("cuda")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    assert len(list(net.parameters())) == 2  # frozen parameters stay parameters


def test_softmax_over_a_tuple_of_axes_and_unsqueeze_dim(rng):
    a = rng.standard_normal((2, 3, 4))
    out = Tensor(a).softmax(dim=(0, 2)).numpy()
    np.testing.assert_allclose(out.sum(axis=(0, 2)), np.ones(3))
    np.testing.assert_allclose(np.exp(Tensor(a).log_softmax(axis=(1, 2)).numpy()).sum((1, 2)), 1)
    assert Tensor(a).unsqueeze(dim=1).shape == (2, 1, 3, 4)
    assert Tensor(a).unsqueeze(dim=1).squeeze(dim=1).shape == (2, 3, 4)


def test_demo_05_runs_as_a_script(tmp_path):
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, str(root / "demos" / "05_nanogpt_style.py"), "--steps", "3"]
        + ["--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={"PYTHONPATH": str(root), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "replay:" in done.stdout and (tmp_path / "nanogpt_backward.html").exists()


def test_more_activation_layers(rng):
    a = rng.standard_normal((2, 5))
    x = Tensor(a)
    sigmoid = 1 / (1 + np.exp(-a))
    for layer, expected in (
        (nn.SiLU(), a * sigmoid),
        (nn.LeakyReLU(0.2), np.where(a > 0, a, 0.2 * a)),
        (nn.ELU(), np.where(a > 0, a, np.expm1(a))),
        (nn.Softplus(), np.log1p(np.exp(a))),
        (nn.Hardtanh(-0.5, 0.5), np.clip(a, -0.5, 0.5)),
        (nn.Tanh(), np.tanh(a)),
        (nn.Sigmoid(), sigmoid),
        (nn.Softmax(dim=0), np.exp(a) / np.exp(a).sum(0)),
        (nn.Identity(7), a),
    ):
        np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-12, err_msg=repr(layer))


def test_set_num_threads_sets_numpys_openblas_thread_count():
    from tinygrad_attn.runtime import openblas_threads

    get, set_ = openblas_threads()
    if get is None:
        pytest.skip("NumPy's BLAS here is not its bundled OpenBLAS")
    before = ta.get_num_threads()
    try:
        ta.set_num_threads(1)
        assert ta.get_num_threads() == 1 == get()
    finally:
        ta.set_num_threads(before)
    assert ta.get_num_threads() == before
    with pytest.raises(RuntimeError, match="positive integer"):
        ta.set_num_threads(0)


def test_numpys_forms_are_reached_through_numpys_functions():
    """`t.flip()`, `t.cumsum()` and `t.softmax()` need their dims, as PyTorch's; NumPy's
    all-dims and flattened forms are NumPy's own functions called on the tensor."""
    a = np.arange(6.0).reshape(2, 3)
    t = ta.tensor(a, requires_grad=True)
    needs_dims = {t.flip: r"flip\(\) needs dims", t.cumsum: r"cumsum\(\) needs dim",
                  t.softmax: r"softmax\(\) needs dim", t.log_softmax: "needs dim"}  # fmt: skip
    for call, needs in needs_dims.items():
        with pytest.raises(TypeError, match=needs):
            call()
    np.testing.assert_array_equal(np.flip(t).numpy(), np.flip(a))
    np.testing.assert_array_equal(np.cumsum(t).numpy(), np.cumsum(a))
    np.testing.assert_array_equal(np.transpose(t).numpy(), a.T)

    def through_numpy(u):  # recorded ops, so exact gradients
        return (np.flip(u) * np.cumsum(u).reshape(2, 3) + np.transpose(u).sum(1)).sum()

    assert ta.autograd.gradcheck(through_numpy, (t,))
