"""nn: every layer through gradcheck (input and each parameter), values against NumPy, names,
state_dict, train/eval, module scopes in the graph, causality, and the errors."""

import math

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.nn as nn
from tinygrad_attn import Tensor
from tinygrad_attn.state import observers


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def float64():
    """Build modules in float64 (gradcheck needs it) and restore the default afterwards."""
    ta.set_default_dtype(np.float64)
    ta.manual_seed(0)
    yield
    ta.set_default_dtype(np.float32)


def np_softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def check_module(module, *inputs):
    """gradcheck of `module(*inputs)` with respect to every input that requires grad and every
    parameter (the parameters go in as gradcheck inputs, through nn.functional_call)."""
    names = [name for name, _ in module.named_parameters()]
    count = len(inputs)

    def call(*tensors):
        params = dict(zip(names, tensors[count:]))
        return nn.functional_call(module, params, *tensors[:count])

    return ta.gradcheck(call, [*inputs, *module.parameters()])


def leaf(rng, *shape):
    return Tensor(rng.standard_normal(shape), requires_grad=True, name="x")


# --------------------------------------------------------------------------------- gradcheck
MODULES = [
    ("Linear", lambda: nn.Linear(3, 2), (2, 3)),
    ("Linear no bias, batched", lambda: nn.Linear(3, 2, bias=False), (2, 2, 3)),
    ("LayerNorm", lambda: nn.LayerNorm(4), (2, 4)),
    ("LayerNorm 2-D shape", lambda: nn.LayerNorm((2, 3)), (2, 2, 3)),
    ("Sequential", lambda: nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 2)), (2, 3)),
    ("ReLU", lambda: nn.Sequential(nn.Linear(3, 3), nn.ReLU()), (2, 3)),
    ("GELU tanh", lambda: nn.GELU(approximate="tanh"), (2, 3)),
    ("SelfAttention", lambda: nn.SelfAttention(3), (4, 3)),
    ("SelfAttention batched, bias", lambda: nn.SelfAttention(2, bias=True), (2, 3, 2)),
    ("MultiHeadAttention", lambda: nn.MultiHeadAttention(4, 2), (1, 3, 4)),
    ("MultiHeadAttention causal", lambda: nn.MultiHeadAttention(4, 2, is_causal=True), (3, 4)),
    ("TransformerBlock", lambda: nn.TransformerBlock(4, 2, mlp_ratio=1), (1, 3, 4)),
]


@pytest.mark.parametrize("make, shape", [m[1:] for m in MODULES], ids=[m[0] for m in MODULES])
def test_module_gradcheck(make, shape, rng, float64):
    module = make()
    assert check_module(module, leaf(rng, *shape))


def test_embedding_gradcheck_and_repeated_ids_accumulate(float64):
    emb = nn.Embedding(5, 3)
    ids = np.array([[1, 1, 4], [0, 1, 2]])
    assert check_module(emb, ids)
    out = emb(ids)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[ids])
    out.sum().backward()
    np.testing.assert_array_equal(emb.weight.grad[:, 0], [1, 3, 1, 0, 1])


def test_multi_head_cross_attention_gradcheck(rng, float64):
    mha = nn.MultiHeadAttention(4, 2)
    query, memory = leaf(rng, 2, 3, 4), leaf(rng, 2, 5, 4)
    mask = rng.random((2, 1, 3, 5)) > 0.3
    names = [name for name, _ in mha.named_parameters()]

    def call(q, m, *params):
        return nn.functional_call(mha, dict(zip(names, params)), q, m, m, attn_mask=mask)

    assert ta.gradcheck(call, [query, memory, *mha.parameters()])


# ------------------------------------------------------------------------- values vs NumPy
def test_linear_is_x_at_w_transpose_plus_b_with_pytorch_init(rng):
    ta.manual_seed(1)
    layer = nn.Linear(16, 5)
    assert layer.weight.shape == (5, 16) and layer.bias.shape == (5,)
    assert layer.weight.dtype == np.float32
    bound = 1 / math.sqrt(16)
    assert np.abs(layer.weight.numpy()).max() <= bound and np.abs(layer.bias.numpy()).max() <= bound
    assert np.abs(layer.weight.numpy()).max() > 0.8 * bound  # uniform over the whole range
    x = rng.standard_normal((3, 2, 16)).astype(np.float32)
    np.testing.assert_allclose(
        layer(Tensor(x)).numpy(), x @ layer.weight.numpy().T + layer.bias.numpy(), rtol=1e-5
    )
    ta.manual_seed(1)
    np.testing.assert_array_equal(nn.Linear(16, 5).weight.numpy(), layer.weight.numpy())


def test_self_attention_is_the_article_formula(rng, float64):
    head = nn.SelfAttention(4)
    x = rng.standard_normal((2, 5, 4))
    q, k, v = (x @ layer.weight.numpy().T for layer in (head.query, head.key, head.value))
    weights = np_softmax(q @ k.swapaxes(-1, -2) / math.sqrt(4))
    out = head(Tensor(x))
    np.testing.assert_allclose(out.numpy(), weights @ v, rtol=1e-12)
    np.testing.assert_allclose(head.attn_weights.numpy(), weights, rtol=1e-12)
    assert head.attn_weights.shape == (2, 5, 5)
    assert head.attn_weights.grad_fn is None  # kept for looking, not holding the graph
    assert head.query.bias is None


def test_multi_head_attention_matches_per_head_numpy(rng, float64):
    mha = nn.MultiHeadAttention(6, 3)
    x = rng.standard_normal((2, 4, 6))
    allowed = rng.random((4, 4)) > 0.3
    np.fill_diagonal(allowed, True)

    def proj(layer, a):
        return a @ layer.weight.numpy().T + layer.bias.numpy()

    q, k, v = (
        proj(p, x).reshape(2, 4, 3, 2).transpose(0, 2, 1, 3)
        for p in (mha.q_proj, mha.k_proj, mha.v_proj)
    )  # (B, H, T, D)
    scores = np.where(allowed, q @ k.swapaxes(-1, -2) / math.sqrt(2), -np.inf)
    heads = np_softmax(scores) @ v  # (B, H, T, D)
    expected = proj(mha.out_proj, heads.transpose(0, 2, 1, 3).reshape(2, 4, 6))
    np.testing.assert_allclose(mha(Tensor(x), attn_mask=allowed).numpy(), expected, rtol=1e-10)
    causal = nn.MultiHeadAttention(6, 3, is_causal=True)
    causal.load_state_dict(mha.state_dict())
    np.testing.assert_allclose(
        causal(Tensor(x)).numpy(), mha(Tensor(x), attn_mask=np.tri(4, dtype=bool)).numpy()
    )


def test_layer_norm_and_dropout_modules(rng):
    ln = nn.LayerNorm(8)
    out = ln(Tensor(rng.standard_normal((3, 8)) * 5 + 2)).numpy()
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(out.var(-1), 1, atol=1e-3)
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = Tensor(np.ones((50, 4)))
    assert model.training and model[1].training
    dropped = model(x).numpy()
    model.eval()
    assert not model[1].training and not model[0].training
    kept = model(x).numpy()
    np.testing.assert_allclose(kept, model[0](x).numpy())
    assert (dropped == 0).mean() > 0.3 and (kept != 0).all()
    assert model.train() is model and model[1].training


# ----------------------------------------------------------------------------- causality
def test_transformer_block_is_causal(rng, float64):
    block = nn.TransformerBlock(8, 2)
    x = leaf(rng, 2, 6, 8)
    out = block(x)
    for i in range(6):
        x.grad = None
        seed = np.zeros(out.shape)
        seed[:, i] = rng.standard_normal((2, 8))
        out.backward(seed, retain_graph=True)
        assert np.all(x.grad[:, i + 1 :] == 0)
        assert np.all(np.abs(x.grad[:, : i + 1]).sum(-1) > 0)


def test_non_causal_block_sees_the_future(rng, float64):
    block = nn.TransformerBlock(4, 1, is_causal=False)
    x = leaf(rng, 1, 3, 4)
    seed = np.zeros((1, 3, 4))
    seed[:, 0] = 1
    block(x).backward(seed)
    assert np.abs(x.grad[:, 2]).sum() > 0


# ------------------------------------------------------------------------------------ names
class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4)
        self.blocks = nn.ModuleList([nn.TransformerBlock(4, 2) for _ in range(2)])
        self.head = nn.Linear(4, 7)

    def forward(self, ids):
        x = self.embed(ids)
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def test_parameters_are_named_by_full_path_as_soon_as_assigned():
    lone = nn.Linear(2, 2)
    assert lone.weight.name == "weight"
    model = Tiny()
    assert model.blocks[0].attn.q_proj.weight.name == "blocks.0.attn.q_proj.weight"
    assert model.blocks[1].mlp[2].bias.name == "blocks.1.mlp.2.bias"
    for name, param in model.named_parameters():
        assert param.name == name
    assert model.blocks[0].attn.path == "blocks.0.attn"
    outer = nn.Sequential(model)  # placing it inside another module renames the subtree
    assert model.head.weight.name == "0.head.weight"
    assert [n for n, _ in model.named_parameters()][0] == "embed.weight"  # relative names
    assert outer[0] is model


def test_registration_rules():
    model = Tiny()
    names = [n for n, _ in model.named_parameters()]
    assert names[:4] == [
        "embed.weight",
        "blocks.0.ln1.weight",
        "blocks.0.ln1.bias",
        "blocks.0.attn.q_proj.weight",
    ]
    assert len(names) == len(set(names)) == len(list(model.parameters()))
    model.head.weight = model.embed.weight  # tied: listed once
    assert sum(p is model.embed.weight for p in model.parameters()) == 1
    model.scale = Tensor(2.0)  # not requiring grad: an attribute, not a parameter
    model.note = "hello"
    assert "scale" not in dict(model.named_parameters())
    model.plain = Tensor(np.ones(3), requires_grad=True)  # PyTorch's rule: an attribute
    assert "plain" not in dict(model.named_parameters())
    model.extra = nn.Parameter(Tensor(np.ones(3)))
    assert "extra" in dict(model.named_parameters())
    model.extra = None  # the slot stays a parameter's, empty
    assert "extra" not in dict(model.named_parameters())
    with pytest.raises(
        TypeError, match="cannot assign 'Tensor \\(float64\\)' as parameter 'extra'"
    ):
        model.extra = Tensor(np.ones(3))
    assert [type(m).__name__ for m in model.children()] == ["Embedding", "ModuleList", "Linear"]
    kinds = [type(m).__name__ for m in model.modules()]
    assert kinds[:4] == ["Tiny", "Embedding", "ModuleList", "TransformerBlock"]
    assert model.get_submodule("blocks.1.attn") is model.blocks[1].attn


def test_forgetting_super_init_is_a_clear_error():
    class Broken(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(2, 2)

    with pytest.raises(RuntimeError, match="super\\(\\).__init__\\(\\)"):
        Broken()


def test_repr_lists_children():
    text = repr(nn.SelfAttention(4))
    assert text.splitlines()[0] == "SelfAttention("
    assert "(query): Linear(in_features=4, out_features=4, bias=False)" in text
    assert repr(nn.Dropout(0.1)) == "Dropout(p=0.1, inplace=False)"  # (PyTorch's repr)


# ------------------------------------------------------------------------------ state_dict
def test_state_dict_round_trip(rng):
    ta.manual_seed(0)
    a = Tiny()
    ta.manual_seed(1)
    b = Tiny()
    ids = rng.integers(0, 7, size=(2, 5))
    assert not np.allclose(a(ids).numpy(), b(ids).numpy())
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(a(ids).numpy(), b(ids).numpy())
    assert b.head.weight.name == "head.weight" and b.head.weight.dtype == np.float32


def test_load_state_dict_errors():
    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    state = model.state_dict()
    del state["1.bias"]
    state["2.weight"] = np.zeros(1)
    with pytest.raises(
        ValueError,
        match=r"(?s)Missing key\(s\) in state_dict: '1.bias'.*Unexpected key\(s\) in state_dict: "
        r"'2.weight'.*strict=False",
    ):
        model.load_state_dict(state)
    result = model.load_state_dict(state, strict=False)
    assert result.missing_keys == ["1.bias"] and result.unexpected_keys == ["2.weight"]
    bad = model.state_dict()
    bad["0.weight"] = np.zeros((2, 3))
    with pytest.raises(
        RuntimeError,
        match=r"size mismatch for 0.weight: copying a param with shape \(2, 3\) from checkpoint, "
        r"the shape in current model is \(3, 2\)",
    ):
        model.load_state_dict(bad, strict=False)


def test_zero_grad_sets_none(rng):
    layer = nn.Linear(2, 2)
    layer(Tensor(np.ones((1, 2)))).sum().backward()
    assert layer.weight.grad is not None
    layer.zero_grad()
    assert layer.weight.grad is None and layer.bias.grad is None


def test_functional_call_restores_the_parameters(rng):
    layer = nn.Linear(2, 2)
    original = layer.weight
    swapped = Tensor(np.zeros((2, 2)), requires_grad=True)
    out = nn.functional_call(layer, {"weight": swapped}, Tensor(np.ones((1, 2))))
    np.testing.assert_allclose(out.numpy(), layer.bias.numpy()[None])
    assert layer.weight is original and [n for n, _ in layer.named_parameters()] == [
        "weight",
        "bias",
    ]
    with pytest.raises(KeyError, match="no parameter 'scale'"):
        nn.functional_call(layer, {"scale": swapped}, Tensor(np.ones((1, 2))))


# ----------------------------------------------------------------------------------- scopes
def _node_scopes(root):
    scopes, stack, seen = set(), [root.grad_fn], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        scopes.add(node.scope)
        stack.extend(p for p in node.parents if isinstance(p, ta.Function))
    return scopes


def test_calling_a_module_records_its_path_on_the_nodes(rng):
    model = Tiny()
    logits = model(rng.integers(0, 7, size=(1, 3)))
    scopes = _node_scopes(logits)
    for path in (
        "embed",
        "blocks.0.attn.q_proj",
        "blocks.0.attn",
        "blocks.1.mlp.1",
        "head",
        "blocks.0.ln1",
    ):
        assert path in scopes
    assert observers.scope == []


def test_scope_is_popped_when_forward_raises():
    layer = nn.Linear(3, 2)
    with pytest.raises(ValueError):
        layer(Tensor(np.ones((1, 4))))
    assert observers.scope == []


# ----------------------------------------------------------------------------------- errors
def test_width_errors_name_the_module_path():
    model = Tiny()
    with pytest.raises(
        ValueError,
        match=r"Linear 'head': expected input of shape \(\.\.\., 4\), "
        r"got shape \(2, 5\)",
    ):
        model.head(Tensor(np.ones((2, 5))))
    with pytest.raises(ValueError, match=r"MultiHeadAttention 'blocks.0.attn'.*query.*\(1, 2, 3\)"):
        model.blocks[0].attn(Tensor(np.ones((1, 2, 3))))
    with pytest.raises(ValueError, match=r"LayerNorm.*\(\.\.\., 4\), got \(3,\)"):
        model.blocks[0].ln1(Tensor(np.ones(3)))
    with pytest.raises(
        ValueError, match=r"SelfAttention: expected input of shape \(\.\.\., T, 3\)"
    ):
        nn.SelfAttention(3)(Tensor(np.ones(3)))
    with pytest.raises(ValueError, match="key .* and value .* same number of positions"):
        nn.MultiHeadAttention(4, 1)(
            Tensor(np.ones((2, 4))), Tensor(np.ones((3, 4))), Tensor(np.ones((2, 4)))
        )


def test_construction_errors():
    with pytest.raises(
        ValueError,
        match=r"embed_dim=10 is not divisible by num_heads=3.*"
        r"\[1, 2, 5, 10\]",
    ):
        nn.MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="in_features must be positive"):
        nn.Linear(0, 3)
    with pytest.raises(TypeError, match="out_features must be an int"):
        nn.Linear(3, 2.0)
    with pytest.raises(ValueError, match="p must be in"):
        nn.Dropout(1.01)  # (p = 1 is allowed, as in PyTorch: tests/test_misuse_engine.py)
    with pytest.raises(TypeError, match="item 1 must be a Module"):
        nn.Sequential(nn.ReLU(), lambda x: x)


def test_embedding_errors():
    emb = nn.Embedding(5, 2)
    with pytest.raises(IndexError, match="index 5 out of range in self"):  # PyTorch's error
        emb(np.array([0, 5]))
    with pytest.raises(TypeError, match="indices must be integers"):
        emb(np.array([0.0, 1.0]))
