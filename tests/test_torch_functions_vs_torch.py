"""The `torch.*` functions and functional forms of torch_functions.py / functional/
against PyTorch itself: the same call on the same float64 input in both libraries, value and
gradient (skipped without torch; tests/test_torch_functions.py keeps PyTorch's numbers for a
fixed case, so part of this runs everywhere)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import tinygrad_attn as ta  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4))
Y = RNG.standard_normal((4, 5))
V = RNG.standard_normal(4)
Q = RNG.standard_normal((2, 3, 4, 5))
K = RNG.standard_normal((2, 3, 6, 5))
P = 1 / (1 + np.exp(-X))
LABELS = (RNG.random((3, 4)) > 0.5).astype(float)
TARGET = np.array([0, 3, -100])


def _f(library):
    return library.nn.functional


# name: (the call, with the library as its first argument; the float64 inputs)
CASES = {
    "exp": (lambda L, a: L.exp(a), X),
    "log": (lambda L, a: L.log(a), np.abs(X) + 0.5),
    "rsqrt": (lambda L, a: L.rsqrt(a), np.abs(X) + 0.5),
    "tanh": (lambda L, a: L.tanh(a), X),
    "erf": (lambda L, a: L.erf(a), X),
    "pow": (lambda L, a: L.pow(a, 3.0), X),
    "pow of a number": (lambda L, a: L.pow(2.0, a), X),
    "clamp": (lambda L, a: L.clamp(a, -0.5, 0.5), X),
    "sum dim": (lambda L, a: L.sum(a, 1), X),
    "mean keepdim": (lambda L, a: L.mean(a, dim=0, keepdim=True), X),
    "max dim": (lambda L, a: L.max(a, 1)[0], X),
    "min dim keepdim": (lambda L, a: L.min(a, dim=0, keepdim=True).values, X),
    "max dim, tied": (lambda L, a: L.max(a, 1).values, np.array([[1.0, 3.0, 3.0]])),
    "amax": (lambda L, a: L.amax(a, 1), X),
    "var dim": (lambda L, a: L.var(a, 1), X),
    "var": (lambda L, a: L.var(a), X),
    "std unbiased=False": (lambda L, a: L.std(a, 0, False), X),
    "norm": (lambda L, a: L.norm(a), X),
    "norm of zeros": (lambda L, a: L.norm(a), np.zeros(3)),
    "norm inf": (lambda L, a: L.norm(a, float("inf")), X),
    "norm p=3 dim": (lambda L, a: L.norm(a, 3, dim=1), X),
    "cumsum": (lambda L, a: L.cumsum(a, 1), X),
    "logsumexp": (lambda L, a: L.logsumexp(a, 1), X),
    "softmax": (lambda L, a: L.softmax(a, -1), X),
    "sort descending": (lambda L, a: L.sort(a, dim=0, descending=True).values, X),
    "matmul": (lambda L, a, b: L.matmul(a, b), X, Y),
    "bmm": (lambda L, a, b: L.bmm(a, b), Q[:, 0], K[:, 0].transpose(0, 2, 1).copy()),
    "outer": (lambda L, a, b: L.outer(a, b), V, V[:3].copy()),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b, beta=0.5, alpha=2.0), Y[0].copy(), X, Y),
    "einsum attention": (lambda L, a, b: L.einsum("bhqd,bhkd->bhqk", a, b), Q, K),
    "einsum implicit": (lambda L, a, b: L.einsum("ij,jk", a, b), X, Y),
    "einsum ellipsis": (lambda L, a, b: L.einsum("...d,...d->...", a, b), Q[:, :1, 0], K[0, :, 0]),
    "einsum three": (lambda L, a, b, c: L.einsum("ij,jk,kl->il", a, b, c), X, Y, Y.T.copy()),
    "einsum one-sided index": (lambda L, a, b: L.einsum("ij,k->k", a, b), X, V),
    "nll_loss": (lambda L, a: _f(L).nll_loss(a.log_softmax(-1), L.tensor(TARGET)), X),
    "nll_loss weight sum": (
        lambda L, a: _f(L).nll_loss(a, L.tensor(TARGET), weight=L.tensor(V), reduction="sum"),
        X,
    ),
    "l1_loss": (lambda L, a, b: _f(L).l1_loss(a, b), X, X[::-1].copy()),
    "smooth_l1_loss": (lambda L, a, b: _f(L).smooth_l1_loss(a, b, beta=0.5), X, X[::-1].copy()),
    "binary_cross_entropy": (lambda L, a, b: _f(L).binary_cross_entropy(a, b), P, LABELS),
    "binary_cross_entropy_with_logits": (
        lambda L, a, b: _f(L).binary_cross_entropy_with_logits(a, b, pos_weight=L.tensor(3.0)),
        np.array([[0.0, 30.0, -30.0, 800.0, -800.0, 1.5]]),
        np.array([[1.0, 0.0, 1.0, 0.0, 1.0, 0.3]]),
    ),
    "normalize": (lambda L, a: _f(L).normalize(a, dim=-1), np.array([[0.0, 0.0], [3.0, 4.0]])),
    "cosine_similarity": (lambda L, a, b: _f(L).cosine_similarity(a, b, dim=-1), X, X[:1].copy()),
    "pad, crop": (lambda L, a: _f(L).pad(a, (-1, 2, 1, 0), value=-1.5), X),
    "nn.CrossEntropyLoss": (
        lambda L, a: L.nn.CrossEntropyLoss(label_smoothing=0.1)(a, L.tensor(np.array([0, 3, 1]))),
        X,
    ),
    "nn.BCEWithLogitsLoss": (
        lambda L, a, b: L.nn.BCEWithLogitsLoss(reduction="sum")(a, b),
        X,
        LABELS,
    ),
    "nn.SmoothL1Loss": (lambda L, a, b: L.nn.SmoothL1Loss(beta=0.5)(a, b), X, X[::-1].copy()),
    "embedding padding_idx": (
        lambda L, w: _f(L).embedding(L.tensor(np.array([[0, 2], [1, 0]])), w, padding_idx=0),
        Y,
    ),
}


def _run(library, fn, arrays):
    leaves = [library.tensor(a, requires_grad=True) for a in arrays]
    out = fn(library, *leaves)
    out.backward(library.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
    grads = [
        np.asarray(leaf.grad) if leaf.grad is not None else 0 * a for leaf, a in zip(leaves, arrays)
    ]
    return np.asarray(out.detach() if library is torch else out.numpy()), grads


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_gradients_equal_pytorchs(name):
    fn, *arrays = CASES[name]
    torch.set_default_dtype(torch.float64)
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    try:
        theirs, their_grads = _run(torch, fn, arrays)
        ours, our_grads = _run(ta, fn, arrays)
    finally:
        ta.set_default_dtype(previous)
        torch.set_default_dtype(torch.float32)
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for got, expected in zip(our_grads, their_grads):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)


MHA_CASES = {  # name: (batch_first, input shapes (query, key, value), forward keywords)
    "sequence first": (False, [(3, 2, 8), (4, 2, 8), (4, 2, 8)], {}),
    "batch first": (True, [(2, 3, 8), (2, 4, 8), (2, 4, 8)], {}),
    "bool attn_mask": (False, [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
                       {"attn_mask": np.array([[False, True, False, False]] * 3)}),
    "float attn_mask": (False, [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
                        {"attn_mask": RNG.standard_normal((3, 4))}),
    "per-head attn_mask": (False, [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
                           {"attn_mask": RNG.random((4, 3, 4)) > 0.7}),
    "key_padding_mask": (False, [(3, 2, 8), (4, 2, 8), (4, 2, 8)],
                         {"key_padding_mask": np.array([[0, 0, 1, 1], [0, 1, 0, 0]], bool)}),
    "weights per head": (True, [(2, 3, 8), (2, 4, 8), (2, 4, 8)], {"average_attn_weights": False}),
    "no weights": (True, [(2, 3, 8), (2, 4, 8), (2, 4, 8)], {"need_weights": False}),
    "unbatched": (False, [(3, 8), (4, 8), (4, 8)], {}),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MHA_CASES))
def test_multihead_attention_equals_pytorchs(name):
    batch_first, shapes, keywords = MHA_CASES[name]
    torch.set_default_dtype(torch.float64)
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    try:
        theirs = torch.nn.MultiheadAttention(8, 2, batch_first=batch_first)
        ours = ta.nn.MultiheadAttention(8, 2, batch_first=batch_first)
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
        arrays = [RNG.standard_normal(shape) for shape in shapes]
        results = []
        for library, layer in ((torch, theirs), (ta, ours)):
            inputs = [library.tensor(a, requires_grad=True) for a in arrays]
            given = {
                k: library.tensor(v) if isinstance(v, np.ndarray) else v
                for k, v in keywords.items()
            }
            out, weights = layer(*inputs, **given)
            out.backward(library.tensor(np.cos(np.arange(out.numel())).reshape(tuple(out.shape))))
            grads = [np.asarray(t.grad) for t in inputs]
            grads += [np.asarray(p.grad) for _, p in layer.named_parameters()]
            to_numpy = (lambda t: t.detach().numpy()) if library is torch else (lambda t: t.numpy())
            results.append((to_numpy(out), None if weights is None else to_numpy(weights), grads))
    finally:
        ta.set_default_dtype(previous)
        torch.set_default_dtype(torch.float32)
    (out_t, weights_t, grads_t), (out_o, weights_o, grads_o) = results
    np.testing.assert_allclose(out_o, out_t, rtol=1e-10, atol=1e-12)
    assert (weights_o is None) == (weights_t is None)
    if weights_t is not None:
        np.testing.assert_allclose(weights_o, weights_t, rtol=1e-10, atol=1e-12)
    for got, expected in zip(grads_o, grads_t):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
