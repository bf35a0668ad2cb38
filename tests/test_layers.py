"""The fused layer ops (ops/layers.py): Linear, LayerNorm, GELU, CrossEntropy.

Each is checked against central differences in float64 and against its composed twin in
functional/; cross-entropy's PyTorch options against values PyTorch 2.13 computed; the tiny
training step of the benchmark records at most 90 nodes.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.functional as F
import tinygrad_attn.nn as nn
from tinygrad_attn import Tensor, gradcheck
from tinygrad_attn.ops.layers import GELU, CrossEntropy, LayerNorm, Linear


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape):
    return Tensor(rng.standard_normal(shape), requires_grad=True, dtype=np.float64)


def nodes_of(root: Tensor) -> list:
    """Every graph node reachable from `root`, found by walking grad_fn -> parents."""
    seen, stack = {}, [root.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        stack.extend(p for p in node.parents if not isinstance(p, Tensor))
    return list(seen.values())


# ------------------------------------------------------------------------------- one node each
@pytest.mark.parametrize("x_shape", [(5,), (4, 5), (2, 3, 5), (2, 1, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_is_one_node_equal_to_composed_and_gradchecks(rng, x_shape, bias):
    x, w = leaf(rng, *x_shape), leaf(rng, 3, 5)
    b = leaf(rng, 3) if bias else None
    out = F.linear(x, w, b)
    assert out.grad_fn.name == "Linear" and len(nodes_of(out)) == 1
    assert out.shape == x_shape[:-1] + (3,)
    np.testing.assert_allclose(out.numpy(), F.linear_composed(x, w, b).numpy(), rtol=1e-13)
    inputs = [x, w] + ([b] if bias else [])
    assert gradcheck(lambda *t: F.linear(*t), inputs)


def test_linear_saves_only_input_and_weight(rng):
    x, w, b = leaf(rng, 2, 3, 5), leaf(rng, 4, 5), leaf(rng, 4)
    out = F.linear(x, w, b)
    saved = out.grad_fn.saved_tensors
    assert len(saved) == 2 and saved[0] is x.numpy() and saved[1] is w.numpy()
    with ta.no_grad():
        x[0, 0, 0] = 1.0
    with pytest.raises(RuntimeError, match="Linear saved its input 0"):
        out.sum().backward()


def test_linear_gradient_only_where_asked(rng):
    x = Tensor(rng.standard_normal((3, 5)))
    w = leaf(rng, 2, 5)
    F.linear(x, w).sum().backward()
    np.testing.assert_allclose(w.grad, np.broadcast_to(x.numpy().sum(0), (2, 5)))
    assert x.grad is None


@pytest.mark.parametrize("shape,normalized", [((4, 6), 6), ((2, 3, 4), (3, 4)), ((5,), (5,))])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norm_is_one_node_equal_to_composed_and_gradchecks(rng, shape, normalized, affine):
    x = leaf(rng, *shape)
    feat = (normalized,) if isinstance(normalized, int) else normalized
    w = leaf(rng, *feat) if affine in ("both", "weight") else None
    b = leaf(rng, *feat) if affine in ("both", "bias") else None
    out = F.layer_norm(x, normalized, w, b)
    assert out.grad_fn.name == "LayerNorm" and len(nodes_of(out)) == 1
    composed = F.layer_norm_composed(x, normalized, w, b)
    np.testing.assert_allclose(out.numpy(), composed.numpy(), rtol=1e-12, atol=1e-12)
    params = [t for t in (w, b) if t is not None]

    def fn(x, *p):
        it = iter(p)
        weight = next(it) if w is not None else None
        bias = next(it) if b is not None else None
        return F.layer_norm(x, normalized, weight, bias)

    assert gradcheck(fn, [x, *params])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_is_one_node_equal_to_composed_and_gradchecks(rng, approximate):
    x = Tensor(rng.standard_normal((3, 4)) * 3, requires_grad=True, dtype=np.float64)
    out = F.gelu(x, approximate=approximate)
    assert out.grad_fn.name == "GELU" and len(nodes_of(out)) == 1
    composed = F.gelu_composed(x, approximate=approximate)
    assert len(nodes_of(composed)) >= 5
    np.testing.assert_allclose(out.numpy(), composed.numpy(), rtol=1e-13, atol=1e-15)
    assert gradcheck(lambda t: F.gelu(t, approximate=approximate), [x])
    assert nn.GELU(approximate)(x).grad_fn.name == "GELU"


def test_gelu_matches_pytorch_values():
    x = Tensor(np.array([-3.0, -0.5, 0.0, 0.7, 2.5]), dtype=np.float64)
    # torch.nn.functional.gelu(x) and gelu(x, approximate="tanh"), PyTorch 2.13, float64
    exact = [-0.00404969409489031, -0.15426876936299344, 0.0, 0.5306254434438489,
             2.4844758366855597]  # fmt: skip
    tanh = [-0.0036373920817729943, -0.15428599017485606, 0.0, 0.5305701347051167,
            2.484915733910001]  # fmt: skip
    np.testing.assert_allclose(F.gelu(x).numpy(), exact, rtol=1e-14)
    np.testing.assert_allclose(F.gelu(x, approximate="tanh").numpy(), tanh, rtol=1e-14)


# ------------------------------------------------------------------------------ cross-entropy
LOGITS = (np.arange(2 * 3 * 4).reshape(2, 3, 4) * 0.37) % 1.3 - 0.5  # (B=2, T=3, C=4)
TARGET = np.array([[1, 3, -100], [0, 2, 2]])  # one position ignored (PyTorch's default)
# F.cross_entropy(logits.reshape(-1, 4), target.reshape(-1), reduction=..., label_smoothing=...)
TORCH_LOSS = {
    ("mean", 0.0): 1.6130935980390215,
    ("mean", 0.2): 1.5814935980390217,
    ("sum", 0.0): 8.065467990195108,
    ("sum", 0.2): 7.907467990195109,
    ("none", 0.0): [1.6552530765895053, 0.9152530765895054, 0.0, 1.680945082866216,
                    1.9070083770749413, 1.907008377074941],
    ("none", 0.2): [1.6182530765895053, 1.0262530765895055, 0.0, 1.6349450828662162,
                    1.8140083770749413, 1.8140083770749413],
}  # fmt: skip
TORCH_GRAD_MEAN_02 = [
    [[0.016392088572552, -0.131791259820256, 0.045316115740892, 0.070083055506812],
     [0.016392088572552, 0.028208740179744, 0.045316115740892, -0.089916944493188],
     [0.0, 0.0, 0.0, 0.0]],
    [[-0.132760415921073, 0.043913034906729, 0.068051766816023, 0.020795614198321],
     [0.042003394197137, 0.065287113859177, -0.140295189883693, 0.033004681827379],
     [0.042003394197137, 0.065287113859177, -0.140295189883693, 0.033004681827379]],
]  # fmt: skip


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("fn", [F.cross_entropy, F.cross_entropy_composed])
def test_cross_entropy_matches_pytorch(fn, reduction, smoothing):
    logits = Tensor(LOGITS, requires_grad=True, dtype=np.float64)
    loss = fn(logits, TARGET, reduction=reduction, label_smoothing=smoothing, axis=-1)
    expected = np.array(TORCH_LOSS[(reduction, smoothing)])
    np.testing.assert_allclose(loss.numpy(), expected.reshape(loss.shape), rtol=1e-13)
    assert loss.shape == (() if reduction != "none" else TARGET.shape)
    if fn is F.cross_entropy:
        assert loss.grad_fn.name == "CrossEntropy" and len(nodes_of(loss)) == 1
    if (reduction, smoothing) == ("mean", 0.2):
        loss.backward()
        np.testing.assert_allclose(logits.grad, TORCH_GRAD_MEAN_02, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_gradchecks(rng, reduction, smoothing, ignore_index):
    logits = leaf(rng, 2, 3, 4)
    target = np.array([[1, 3, 2], [0, 2, 1]])
    assert gradcheck(
        lambda t: F.cross_entropy(
            t,
            target,
            reduction=reduction,
            ignore_index=ignore_index,
            label_smoothing=smoothing,
            axis=-1,
        ),
        [logits],
    )


def test_cross_entropy_ignore_index_other_than_default():
    logits = Tensor(LOGITS.reshape(6, 4), dtype=np.float64)
    loss = F.cross_entropy(logits, np.array([1, 2, 3, 0, 1, 2]), ignore_index=2)
    assert loss.item() == pytest.approx(1.5460379048492197, rel=1e-13)  # PyTorch 2.13


def test_cross_entropy_all_ignored_is_nan_with_zero_gradient_as_pytorch():
    logits = Tensor(LOGITS, requires_grad=True, dtype=np.float64)
    target = np.full((2, 3), -100)
    loss = F.cross_entropy(logits, target, axis=-1)
    assert np.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(logits.grad, 0)
    assert F.cross_entropy(logits, target, reduction="sum", axis=-1).item() == 0


def test_cross_entropy_targets_refilled_after_forward_do_not_change_the_gradient(rng):
    logits = leaf(rng, 4, 5)
    labels = np.array([0, 1, 2, 3])
    F.cross_entropy(logits, labels).backward()
    expected = logits.grad.numpy().copy()
    logits.grad = None
    loss = F.cross_entropy(logits, labels)
    labels[:] = [4, 4, 4, 4]  # the next batch's labels, written into the same buffer
    loss.backward()
    np.testing.assert_array_equal(logits.grad, expected)


def test_cross_entropy_saves_read_only_arrays(rng):
    node = F.cross_entropy(leaf(rng, 3, 4), np.array([0, 1, 3])).grad_fn
    assert all(not a.flags.writeable for a in node.saved_tensors)


def test_cross_entropy_float32_keeps_dtype(rng):
    logits = Tensor(rng.standard_normal((2, 3, 5)), requires_grad=True, dtype=np.float32)
    loss = F.cross_entropy(logits, np.array([[0, 1, 4], [2, 3, 3]]), axis=-1)
    loss.backward()
    assert loss.dtype == np.float32 and logits.grad.dtype == np.float32


@pytest.mark.parametrize(
    "target,error,match",
    [
        (np.array([0, 5]), IndexError, r"Target 5 is out of bounds.*\[0, 5\)"),  # PyTorch's
        (np.array([-1, 0]), IndexError, "Target -1 is out of bounds"),
        (np.array([0.0, 1.0]), ValueError, "class probabilities, which must have the input's"),
        (np.array([True, False]), TypeError, "class indices .* got dtype bool"),
        (np.array([0, 1, 2]), ValueError, r"expected target size \(2,\)"),
    ],
)
def test_cross_entropy_target_errors(target, error, match):
    logits = Tensor(np.zeros((2, 5)))
    with pytest.raises(error, match=match):
        F.cross_entropy(logits, target)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"reduction": "avg"}, ValueError, "'avg' is not a valid value for reduction"),
        ({"label_smoothing": 1.5}, RuntimeError, "label_smoothing must be between 0.0 and 1.0"),
        ({"label_smoothing": "0.1"}, TypeError, "label_smoothing must be a float"),
        ({"ignore_index": 1.0}, TypeError, "ignore_index must be an int"),
    ],
)
def test_cross_entropy_option_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        F.cross_entropy(Tensor(np.zeros((2, 5))), np.array([0, 1]), **kwargs)


# ------------------------------------------------------------------------ integer-like shapes
def test_layer_norm_accepts_numpy_integer_shapes(rng):
    x = leaf(rng, 3, 4)
    expected = F.layer_norm(x, 4).numpy()
    np.testing.assert_array_equal(F.layer_norm(x, np.int64(4)).numpy(), expected)
    np.testing.assert_array_equal(F.layer_norm(x, (np.int32(4),)).numpy(), expected)
    layer = nn.LayerNorm(np.int64(4))
    assert layer.normalized_shape == (4,) and type(layer.normalized_shape[0]) is int
    assert layer(x).shape == (3, 4)


@pytest.mark.parametrize("fn", [F.layer_norm, F.layer_norm_composed])
def test_layer_norm_weight_as_a_list_is_a_clear_type_error(fn):
    with pytest.raises(TypeError, match=r"weight must be a Tensor.*got list"):
        fn(Tensor(np.zeros((2, 3))), 3, weight=[1.0, 1.0, 1.0])


@pytest.mark.parametrize("shape", [4.0, "4", [4.0]])
def test_layer_norm_bad_normalized_shape_is_a_type_error(shape):
    with pytest.raises(TypeError, match="normalized_shape must be an int or a tuple of ints"):
        F.layer_norm(Tensor(np.zeros((2, 4))), shape)
    with pytest.raises(TypeError, match="normalized_shape"):
        nn.LayerNorm(shape)


def test_linear_shape_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"input of shape \(2, 4\) does not fit weight \(3, 5\)"):
        F.linear(Tensor(np.zeros((2, 4))), Tensor(np.zeros((3, 5))))
    with pytest.raises(ValueError, match=r"bias has shape \(5,\), expected \(3,\)"):
        F.linear(Tensor(np.zeros((2, 5))), Tensor(np.zeros((3, 5))), Tensor(np.zeros(5)))


# ------------------------------------------------------------------------------ whole model
class TinyLM(nn.Module):
    """The model of benchmarks/train_step.py (and ../shared/bench/train_peers.py)."""

    def __init__(self, vocab, max_len, embed, heads, blocks):
        super().__init__()
        self.tokens = nn.Embedding(vocab, embed)
        self.positions = nn.Embedding(max_len, embed)
        self.blocks = nn.ModuleList(
            nn.TransformerBlock(embed, heads, is_causal=True) for _ in range(blocks)
        )
        self.ln_f = nn.LayerNorm(embed)
        self.head = nn.Linear(embed, vocab)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(np.arange(ids.shape[-1]))  # (B, T, E)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))  # (B, T, V)


def test_tiny_training_step_records_at_most_90_nodes():
    ta.manual_seed(0)
    model = TinyLM(vocab=12, max_len=8, embed=32, heads=2, blocks=2)
    ids = np.random.default_rng(1).integers(0, 12, size=(16, 9))
    loss = F.cross_entropy(model(ids[:, :-1]), ids[:, 1:], axis=-1)
    nodes = nodes_of(loss)
    names = [n.name for n in nodes]
    assert len(nodes) <= 90, sorted(names)
    for fused in ("Linear", "LayerNorm", "GELU", "CrossEntropy"):
        assert fused in names
    assert "Erf" not in names and "Tanh" not in names and "MatMul" not in names
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())


def test_tiny_model_gradients_equal_the_composed_forms_in_float64():
    ta.set_default_dtype(np.float64)
    try:
        ta.manual_seed(0)
        model = TinyLM(vocab=7, max_len=4, embed=8, heads=2, blocks=1)
    finally:
        ta.set_default_dtype(np.float32)
    ids = np.random.default_rng(2).integers(0, 7, size=(3, 5))
    F.cross_entropy(model(ids[:, :-1]), ids[:, 1:], axis=-1).backward()
    fused = {n: p.grad.numpy().copy() for n, p in model.named_parameters()}
    model.zero_grad()
    block = model.blocks[0]
    x = model.tokens(ids[:, :-1]) + model.positions(np.arange(4))
    h = F.layer_norm_composed(x, 8, block.ln1.weight, block.ln1.bias)
    x = x + block.attn(h)
    h = F.layer_norm_composed(x, 8, block.ln2.weight, block.ln2.bias)
    up, down = block.mlp[0], block.mlp[2]
    h = F.gelu_composed(F.linear_composed(h, up.weight, up.bias), approximate="tanh")
    x = x + F.linear_composed(h, down.weight, down.bias)
    h = F.layer_norm_composed(x, 8, model.ln_f.weight, model.ln_f.bias)
    logits = F.linear_composed(h, model.head.weight, model.head.bias)
    F.cross_entropy_composed(logits, ids[:, 1:], axis=-1).backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad, fused[name], rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_saves_its_slope_and_its_input_and_nothing_under_no_grad(rng, approximate):
    """The slope makes backward one multiply; the input (not a copy) is there for the second
    derivative (backward_graph differentiates the composed GELU at it)."""
    x = leaf(rng, 2, 3)
    out = F.gelu(x, approximate=approximate)
    slope, saved_x = out.grad_fn.saved_tensors
    assert slope.shape == x.shape and not slope.flags.writeable
    assert saved_x is x.numpy()
    with ta.no_grad():
        quiet = F.gelu(x, approximate=approximate)
    assert quiet.grad_fn is None
    np.testing.assert_array_equal(quiet.numpy(), out.numpy())


def test_nn_linear_composed_draws_the_steps_with_the_same_numbers(rng):
    ta.set_default_dtype(np.float64)
    try:
        ta.manual_seed(0)
        fused = nn.Linear(5, 3)
        ta.manual_seed(0)
        composed = nn.Linear(5, 3, composed=True)
    finally:
        ta.set_default_dtype(np.float32)
    x = leaf(rng, 2, 4, 5)
    a, b = fused(x), composed(x)
    assert a.grad_fn.name == "Linear" and len(nodes_of(b)) == 3  # Transpose, MatMul, Add
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-13)
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(fused.weight.grad, composed.weight.grad, rtol=1e-13)
    assert repr(composed) == "Linear(in_features=5, out_features=3, bias=True)"  # as PyTorch
    assert nn.SelfAttention(4).query.composed  # the article's head shows every step


def test_each_fused_backward_is_three_frames_below_the_call_to_backward():
    ops = {op.backward.__code__: op.__name__ for op in (Linear, LayerNorm, GELU, CrossEntropy)}
    x, w = Tensor(np.ones((3, 4)), requires_grad=True), Tensor(np.ones((5, 4)), requires_grad=True)
    h = F.layer_norm(F.gelu(F.linear(x, w)), 5, ta.ones(5, requires_grad=True))
    loss = F.cross_entropy(h, np.array([0, 1, 2]))
    here, depth = sys._getframe().f_code, {}

    def profiler(frame, event, arg):
        if event == "call" and frame.f_code in ops:
            outer, n = frame, 0
            while outer.f_code is not here:
                outer, n = outer.f_back, n + 1
            depth[ops[frame.f_code]] = n

    sys.setprofile(profiler)
    try:
        loss.backward()
    finally:
        sys.setprofile(None)
    assert depth == {"Linear": 3, "LayerNorm": 3, "GELU": 3, "CrossEntropy": 3}


def test_exact_gelu_in_float32_agrees_with_math_erf_on_a_wide_grid():
    """float32's exact GELU evaluates Phi with a polynomial fitted to math.erfc (ops/layers.py)
    rather than math.erf per element: value and slope agree with math.erf's answer, evaluated
    at the same float32 inputs in float64, to float32's resolution, the far negative tail too."""
    import math

    xs = np.concatenate([np.linspace(-12, 12, 48001), [0.0, -0.0, 1e-30, -1e-30]])
    x32 = xs.astype(np.float32)
    x = x32.astype(np.float64)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    expected, expected_slope = x * cdf, cdf + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
    t = Tensor(x32, requires_grad=True)
    out = F.gelu(t)
    assert out.dtype == np.float32
    slope, _ = out.grad_fn.saved_tensors
    scale = np.maximum(np.abs(expected), 1e-30)
    core = np.abs(x) < 4
    assert np.max(np.abs(out.numpy() - expected)[core] / np.maximum(scale[core], 1e-3)) < 2e-6
    assert np.max(np.abs(out.numpy() - expected) / scale) < 3e-5  # the tail: float32's exp(-x^2/2)
    np.testing.assert_allclose(slope, expected_slope, rtol=0, atol=5e-7)
    assert np.signbit(out.numpy()[-3]) and out.numpy()[-4] == 0.0  # -0.0 -> -0.0, 1e-30 -> tiny
