"""functional: every composite through gradcheck, values against NumPy, the fused attention
against the composed one, causality, dropout, and the errors for bad arguments."""

import math

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape, name=None):
    return Tensor(rng.standard_normal(shape), requires_grad=True, name=name)


def np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def seeded_dropout(x):
    ta.manual_seed(7)  # the same mask on every call gradcheck makes
    return F.dropout(x, p=0.4)


# One row per composite: (id, fn, input factory). gradcheck runs on float64 inputs.
LABELS_NC = np.array([2, 0, 1, 2])
LABELS_BTC = np.array([[0, 3], [2, 2], [1, 0]])
BOOL_MASK = np.array([[True, False, True, True], [True, True, False, False], [False] * 4])
OP_TABLE = [
    ("softmax", lambda x: F.softmax(x, -1), lambda r: [leaf(r, 3, 4)]),
    ("softmax axis 0", lambda x: F.softmax(x, axis=0), lambda r: [leaf(r, 3, 4)]),
    ("log_softmax", lambda x: F.log_softmax(x, -1), lambda r: [leaf(r, 2, 3, 4)]),
    (
        "relu",
        F.relu,
        lambda r: [
            Tensor(r.uniform(0.1, 1, (3, 4)) * r.choice([-1, 1], (3, 4)), requires_grad=True)
        ],
    ),
    ("gelu exact", F.gelu, lambda r: [leaf(r, 3, 4)]),
    ("gelu tanh", lambda x: F.gelu(x, approximate="tanh"), lambda r: [leaf(r, 3, 4)]),
    ("sigmoid", F.sigmoid, lambda r: [leaf(r, 3, 4)]),
    ("tanh", F.tanh, lambda r: [leaf(r, 3, 4)]),
    ("cross_entropy (N, C)", lambda x: F.cross_entropy(x, LABELS_NC), lambda r: [leaf(r, 4, 3)]),
    (
        "cross_entropy sum",
        lambda x: F.cross_entropy(x, LABELS_NC, reduction="sum"),
        lambda r: [leaf(r, 4, 3)],
    ),
    (
        "cross_entropy none",
        lambda x: F.cross_entropy(x, LABELS_NC, reduction="none"),
        lambda r: [leaf(r, 4, 3)],
    ),
    (
        "cross_entropy (B, T, C)",
        lambda x: F.cross_entropy(x, LABELS_BTC, axis=-1),
        lambda r: [leaf(r, 3, 2, 4)],
    ),
    ("mse_loss", F.mse_loss, lambda r: [leaf(r, 3, 4), leaf(r, 3, 4)]),
    (
        "mse_loss none",
        lambda a, b: F.mse_loss(a, b, reduction="none"),
        lambda r: [leaf(r, 2, 3), leaf(r, 2, 3)],
    ),
    ("layer_norm int", lambda x: F.layer_norm(x, 4), lambda r: [leaf(r, 2, 3, 4)]),
    (
        "layer_norm affine",
        lambda x, w, b: F.layer_norm(x, 4, w, b),
        lambda r: [leaf(r, 3, 4), leaf(r, 4), leaf(r, 4)],
    ),
    (
        "layer_norm tuple",
        lambda x, w: F.layer_norm(x, (3, 4), w),
        lambda r: [leaf(r, 2, 3, 4), leaf(r, 3, 4)],
    ),
    ("dropout", seeded_dropout, lambda r: [leaf(r, 4, 5)]),
    (
        "sdpa",
        F.scaled_dot_product_attention,
        lambda r: [leaf(r, 2, 3, 4), leaf(r, 2, 4, 4), leaf(r, 2, 4, 5)],
    ),
    (
        "sdpa causal L<S",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda r: [leaf(r, 3, 2), leaf(r, 4, 2), leaf(r, 4, 3)],
    ),
    (
        "sdpa bool mask",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, BOOL_MASK),
        lambda r: [leaf(r, 3, 2), leaf(r, 4, 2), leaf(r, 4, 3)],
    ),
    (
        "sdpa float mask",
        lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, m),
        lambda r: [leaf(r, 3, 2), leaf(r, 4, 2), leaf(r, 4, 3), leaf(r, 3, 4)],
    ),
    (
        "sdpa broadcast",
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
        lambda r: [leaf(r, 2, 1, 3, 2), leaf(r, 1, 2, 4, 2), leaf(r, 4, 3)],
    ),
    (
        "attention_composed causal",
        lambda q, k, v: F.attention_composed(q, k, v, is_causal=True),
        lambda r: [leaf(r, 4, 2), leaf(r, 3, 2), leaf(r, 3, 3)],
    ),
    (
        "attention_composed float mask",
        lambda q, k, v, m: F.attention_composed(q, k, v, m),
        lambda r: [leaf(r, 3, 2), leaf(r, 4, 2), leaf(r, 4, 3), leaf(r, 3, 4)],
    ),
    (
        "attention_composed bool mask",
        lambda q, k, v: F.attention_composed(q, k, v, BOOL_MASK),
        lambda r: [leaf(r, 3, 2), leaf(r, 4, 2), leaf(r, 4, 3)],
    ),
    ("attention_weights", F.attention_weights, lambda r: [leaf(r, 2, 3, 2), leaf(r, 2, 4, 2)]),
]


@pytest.mark.parametrize("fn, make", [row[1:] for row in OP_TABLE], ids=[r[0] for r in OP_TABLE])
def test_gradcheck(fn, make, rng):
    assert ta.gradcheck(fn, make(rng))


# ------------------------------------------------------------------------- values vs NumPy
def test_activation_values(rng):
    x = rng.standard_normal((3, 5))
    t = Tensor(x)
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(F.gelu(t).numpy(), 0.5 * x * (1 + erf(x / math.sqrt(2))), rtol=1e-12)
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    np.testing.assert_allclose(F.gelu(t, approximate="tanh").numpy(), tanh_form, rtol=1e-12)
    np.testing.assert_allclose(F.softmax(t, axis=0).numpy(), np_softmax(x, 0), rtol=1e-12)
    np.testing.assert_allclose(F.log_softmax(t, 1).numpy(), np.log(np_softmax(x)), rtol=1e-12)
    np.testing.assert_allclose(F.sigmoid(t).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(F.relu(t).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(F.tanh(t).numpy(), np.tanh(x))


def test_cross_entropy_matches_negative_log_likelihood(rng):
    logits = rng.standard_normal((2, 3, 5))
    target = rng.integers(0, 5, size=(2, 3))
    nll = -np.log(np_softmax(logits))[np.arange(2)[:, None], np.arange(3), target]  # (2, 3)
    per_item = F.cross_entropy(Tensor(logits), target, reduction="none", axis=-1)
    assert per_item.shape == (2, 3)
    np.testing.assert_allclose(per_item.numpy(), nll, rtol=1e-12)
    np.testing.assert_allclose(F.cross_entropy(Tensor(logits), target, axis=-1).item(), nll.mean())
    np.testing.assert_allclose(
        F.cross_entropy(Tensor(logits), Tensor(target), reduction="sum", axis=-1).item(), nll.sum()
    )
    # PyTorch's layout, class axis 1: the same numbers
    moved = Tensor(np.moveaxis(logits, -1, 1))  # (2, 5, 3)
    np.testing.assert_allclose(F.cross_entropy(moved, target, reduction="none").numpy(), nll)


def test_cross_entropy_gradient_is_softmax_minus_one_hot(rng):
    logits = leaf(rng, 4, 3)
    F.cross_entropy(logits, LABELS_NC).backward()
    expected = (np_softmax(logits.numpy()) - np.eye(3)[LABELS_NC]) / 4
    np.testing.assert_allclose(logits.grad, expected, rtol=1e-12)


def test_mse_and_layer_norm_values(rng):
    a, b = rng.standard_normal((2, 3, 4))
    np.testing.assert_allclose(F.mse_loss(Tensor(a), b).item(), ((a - b) ** 2).mean())
    np.testing.assert_allclose(
        F.mse_loss(Tensor(a), Tensor(b), reduction="sum").item(), ((a - b) ** 2).sum()
    )
    x = rng.standard_normal((2, 3, 4))
    w, bias = rng.standard_normal((2, 3, 4))
    axes = (1, 2)
    expected = (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + 1e-5)
    got = F.layer_norm(Tensor(x), (3, 4), Tensor(w), Tensor(bias))
    np.testing.assert_allclose(got.numpy(), expected * w + bias, rtol=1e-10)


def test_float32_stays_float32(rng):
    x = Tensor(rng.standard_normal((2, 3, 4)), dtype=np.float32)
    assert F.gelu(x).dtype == np.float32
    assert F.layer_norm(x, 4).dtype == np.float32
    assert F.dropout(x, 0.5).dtype == np.float32
    assert F.cross_entropy(x, np.zeros((2, 4), dtype=int)).dtype == np.float32  # (axis 1)
    mask = rng.standard_normal((3, 3))  # float64 constant mask: cast to the query's dtype
    assert F.scaled_dot_product_attention(x, x, x, attn_mask=mask).dtype == np.float32
    assert F.attention_composed(x, x, x, is_causal=True).dtype == np.float32


# --------------------------------------------------------------- fused == composed attention
def _attention_cases(rng):
    """(id, q, k, v, keywords) for the comparisons of the fused and the composed attention."""

    def qkv(qshape, kshape, vshape):
        return leaf(rng, *qshape), leaf(rng, *kshape), leaf(rng, *vshape)

    minus_inf = np.where(rng.random((5, 6)) > 0.3, 0.0, -np.inf)
    minus_inf[:, 0] = 0.0  # every query keeps one key: a row of -inf is NaN in the composed form
    fully_masked = np.ones((5, 6), dtype=bool)
    fully_masked[1] = False  # query 1 may attend to nothing
    fully_masked[3, 2:] = False
    return [
        ("plain", *qkv((2, 5, 4), (2, 6, 4), (2, 6, 3)), {}),
        (
            "bool mask",
            *qkv((2, 5, 4), (2, 6, 4), (2, 6, 3)),
            {"attn_mask": rng.random((5, 6)) > 0.4},
        ),
        (
            "float mask",
            *qkv((2, 5, 4), (2, 6, 4), (2, 6, 3)),
            {"attn_mask": rng.standard_normal((2, 5, 6))},
        ),
        ("float mask with -inf", *qkv((5, 4), (6, 4), (6, 3)), {"attn_mask": minus_inf}),
        ("causal L == S", *qkv((2, 5, 4), (2, 5, 4), (2, 5, 3)), {"is_causal": True}),
        ("causal L < S", *qkv((3, 4), (6, 4), (6, 3)), {"is_causal": True}),
        ("causal L > S", *qkv((6, 4), (3, 4), (3, 2)), {"is_causal": True}),
        (
            "broadcast batch and heads",
            *qkv((2, 3, 5, 4), (1, 3, 6, 4), (2, 1, 6, 3)),
            {"attn_mask": rng.random((2, 1, 5, 6)) > 0.3},
        ),
        ("fully masked row", *qkv((2, 5, 4), (2, 6, 4), (2, 6, 3)), {"attn_mask": fully_masked}),
        ("scale", *qkv((5, 4), (6, 4), (6, 3)), {"scale": 0.1}),
    ]


CASE_IDS = [c[0] for c in _attention_cases(np.random.default_rng(0))]


@pytest.mark.parametrize("case", range(len(CASE_IDS)), ids=CASE_IDS)
def test_fused_attention_equals_composed(case, rng):
    _, q, k, v, kwargs = _attention_cases(rng)[case]
    grads = []
    outputs = []
    for attention in (F.scaled_dot_product_attention, F.attention_composed):
        for t in (q, k, v):
            t.grad = None
        out = attention(q, k, v, **kwargs)
        seed = np.random.default_rng(1).standard_normal(out.shape)
        out.backward(seed)
        outputs.append(out.numpy())
        grads.append([t.grad.numpy().copy() for t in (q, k, v)])
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-10, atol=1e-12)
    for fused, composed in zip(*grads):
        assert np.isfinite(fused).all() and np.isfinite(composed).all()
        np.testing.assert_allclose(fused, composed, rtol=1e-9, atol=1e-12)


def test_fully_masked_row_gives_zeros_and_finite_gradients(rng):
    q, k, v = leaf(rng, 3, 2), leaf(rng, 4, 2), leaf(rng, 4, 3)
    mask = np.ones((3, 4), dtype=bool)
    mask[1] = False
    for attention in (F.scaled_dot_product_attention, F.attention_composed):
        for t in (q, k, v):
            t.grad = None
        out = attention(q, k, v, attn_mask=mask)
        assert np.all(out.numpy()[1] == 0)
        assert np.isfinite(out.numpy()).all()
        out.sum().backward()
        assert np.all(q.grad[1] == 0)
        assert all(np.isfinite(t.grad).all() for t in (q, k, v))


def test_float_mask_gradient_matches_composed(rng):
    q, k, v = leaf(rng, 3, 2), leaf(rng, 4, 2), leaf(rng, 4, 3)
    mask = leaf(rng, 3, 4)
    F.scaled_dot_product_attention(q, k, v, mask).sum().backward()
    fused = mask.grad.numpy().copy()
    mask.grad = None
    F.attention_composed(q, k, v, mask).sum().backward()
    np.testing.assert_allclose(fused, mask.grad, rtol=1e-10)


def test_causal_means_top_left_tril(rng):
    q, k, v = (Tensor(rng.standard_normal(s)) for s in ((3, 2), (5, 2), (5, 4)))
    tril = np.tril(np.ones((3, 5), dtype=bool))  # PyTorch's tril(ones(L, S))
    np.testing.assert_allclose(
        F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy(),
        F.scaled_dot_product_attention(q, k, v, attn_mask=tril).numpy(),
    )
    weights = F.attention_weights(q, k, is_causal=True).numpy()
    assert np.all(weights[~tril] == 0)
    np.testing.assert_allclose(weights.sum(-1), 1)


@pytest.mark.parametrize("attention", [F.scaled_dot_product_attention, F.attention_composed])
@pytest.mark.parametrize("lengths", [(5, 5), (4, 6), (6, 3)])
def test_causal_output_has_zero_gradient_from_later_positions(attention, lengths, rng):
    length, source = lengths
    q, k, v = leaf(rng, 2, length, 3), leaf(rng, 2, source, 3), leaf(rng, 2, source, 2)
    out = attention(q, k, v, is_causal=True)
    for i in range(length):
        for t in (q, k, v):
            t.grad = None
        seed = np.zeros(out.shape)
        seed[:, i] = 1
        out.backward(seed, retain_graph=True)
        assert np.all(k.grad[:, i + 1 :] == 0) and np.all(v.grad[:, i + 1 :] == 0)
        assert np.all(q.grad[:, np.arange(length) != i] == 0)
        assert np.any(v.grad[:, : i + 1] != 0)  # the earlier positions do matter


def test_composed_attention_names_its_steps(rng):
    q, k, v = leaf(rng, 3, 2), leaf(rng, 3, 2), leaf(rng, 3, 2)
    out = F.attention_composed(q, k, v, is_causal=True)
    assert out.name == "output"
    names = set()
    stack = [out.grad_fn]
    while stack:
        node = stack.pop()
        names.add(node.output_name)
        stack.extend(p for p in node.parents if isinstance(p, ta.Function))
    assert {"scores", "masked_scores", "weights", "output"} <= names


# ----------------------------------------------------------------------------------- dropout
def test_dropout_is_seeded_scaled_and_off_in_eval(rng):
    x = Tensor(np.ones((200, 50)), requires_grad=True)
    ta.manual_seed(3)
    a = F.dropout(x, p=0.3)
    ta.manual_seed(3)
    b = F.dropout(x, p=0.3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    kept = a.numpy() != 0
    assert abs(kept.mean() - 0.7) < 0.02
    np.testing.assert_allclose(a.numpy()[kept], 1 / 0.7)
    a.sum().backward()
    np.testing.assert_allclose(x.grad, kept / 0.7)
    assert F.dropout(x, p=0.3, training=False) is x
    assert F.dropout(x, p=0.0) is x


# ------------------------------------------------------------------------------------ errors
def test_cross_entropy_errors(rng):
    logits = Tensor(rng.standard_normal((4, 3)))
    with pytest.raises(IndexError, match=r"Target 3 is out of bounds: with 3 classes"):
        F.cross_entropy(logits, np.array([0, 3, 1, 2]))
    with pytest.raises(IndexError, match=r"Target -1 "):
        F.cross_entropy(logits, np.array([0, -1, 1, 2]))
    with pytest.raises(ValueError, match=r"class probabilities.*\(4, 3\), got \(4,\)"):
        F.cross_entropy(logits, np.array([0.0, 1.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match=r"expected target size \(4,\).*got \(2, 2\)"):
        F.cross_entropy(logits, np.zeros((2, 2), dtype=int))
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(logits, np.zeros(4, dtype=int), reduction="average")


def test_attention_errors_name_shapes_and_fix(rng):
    q = Tensor(rng.standard_normal((2, 5, 4)))
    k = Tensor(rng.standard_normal((2, 6, 4)))
    v = Tensor(rng.standard_normal((2, 6, 3)))
    sdpa = F.scaled_dot_product_attention
    with pytest.raises(ValueError, match=r"query \(2, 5, 4\) and key \(2, 6, 3\).*same width"):
        sdpa(q, Tensor(rng.standard_normal((2, 6, 3))), v)
    with pytest.raises(ValueError, match=r"key \(2, 6, 4\) and value \(2, 7, 3\).*positions S"):
        sdpa(q, k, Tensor(rng.standard_normal((2, 7, 3))))
    with pytest.raises(ValueError, match="batch axes.*do not broadcast"):
        sdpa(q, Tensor(rng.standard_normal((3, 6, 4))), Tensor(rng.standard_normal((3, 6, 3))))
    with pytest.raises(ValueError, match="either attn_mask or is_causal"):
        sdpa(q, k, v, attn_mask=np.ones((5, 6), dtype=bool), is_causal=True)
    with pytest.raises(ValueError, match=r"attn_mask of shape \(6, 5\).*\(2, 5, 6\)"):
        sdpa(q, k, v, attn_mask=np.ones((6, 5), dtype=bool))
    with pytest.raises(TypeError, match="attn_mask must be bool.*int64"):
        sdpa(q, k, v, attn_mask=np.ones((5, 6), dtype=np.int64))
    with pytest.raises(ValueError, match="at least 2 axes"):
        sdpa(Tensor(rng.standard_normal(4)), k, v)
    with pytest.raises(TypeError, match="share one dtype"):
        sdpa(q, Tensor(k.numpy().astype(np.float32)), v)
    with pytest.raises(TypeError, match="must be a Tensor"):
        sdpa([[1.0]], k, v)
    with pytest.raises(ValueError, match="same width"):
        F.attention_composed(q, Tensor(rng.standard_normal((2, 6, 3))), v)


def test_other_argument_errors(rng):
    x = Tensor(rng.standard_normal((2, 3)))
    with pytest.raises(ValueError, match=r"normalized_shape \(4,\).*\(2, 3\)"):
        F.layer_norm(x, 4)
    with pytest.raises(ValueError, match="weight has shape"):
        F.layer_norm(x, 3, weight=Tensor(np.ones(4)))
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(x, approximate="fast")
    for p in (-0.1, 1.5):  # p = 1 is allowed, as in PyTorch (tests/test_misuse.py)
        with pytest.raises(ValueError, match="p must be in"):
            F.dropout(x, p)
    with pytest.raises(ValueError, match=r"input has shape \(2, 3\) but target has shape \(4,\)"):
        F.mse_loss(x, np.ones(4))
    with pytest.warns(UserWarning, match="different to the input size"):  # PyTorch broadcasts
        F.mse_loss(x, np.ones(3))


def test_sdpa_with_a_numpy_float64_scale_keeps_float32():
    """`scale=1 / np.sqrt(d)` is a NumPy float64: the float32 step must stay float32 (a
    float64 scale once made every array of the attention float64, and the step twice as slow)."""
    rng = np.random.default_rng(0)
    q, k, v = (
        ta.Tensor(rng.standard_normal((2, 4, 8)), dtype=np.float32, requires_grad=True)
        for _ in range(3)
    )
    from tinygrad_attn.ops.attention import ScaledDotProductAttention

    out = ScaledDotProductAttention.apply(q, k, v, scale=1 / np.sqrt(8))  # as benchmarks/ do
    assert out.dtype == np.float32
    out.sum().backward()
    assert all(t.grad.dtype == np.float32 for t in (q, k, v))
    expected = F.scaled_dot_product_attention(q, k, v, scale=float(1 / np.sqrt(8)))
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-6)
