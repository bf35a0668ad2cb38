"""nn and F against PyTorch itself (skipped without torch): the same calls on the same float64
inputs in both libraries, values and gradients, over grids of options (cross_entropy, nll_loss,
the other losses, activations, softmax, rms_norm, attention with grouped heads, embedding),
and Module behaviour side by side (state_dict names and order, loading PyTorch's weights,
hooks' arguments, dtype conversion). tests/test_functional_pytorch.py and
tests/test_nn_layers_pytorch.py keep PyTorch's numbers for fixed cases, so the same claims are
also checked where torch is not installed."""

from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict

import numpy as np
import pytest

torch = pytest.importorskip("torch")
TF = torch.nn.functional

import tinygrad_attn as ta  # noqa: E402
import tinygrad_attn.nn.functional as F  # noqa: E402, N812
from tinygrad_attn import nn  # noqa: E402


def _pair(array: np.ndarray, grad: bool = True) -> tuple:
    return ta.tensor(array, requires_grad=grad), torch.tensor(array, requires_grad=grad)


def _close(ours, theirs, tol: float = 1e-12) -> None:
    np.testing.assert_allclose(
        np.asarray(ours.numpy()), theirs.detach().numpy(), rtol=tol, atol=tol
    )


# ---------------------------------------------------------------------------- cross_entropy
CE_GRID = [
    case
    for case in itertools.product(
        [(5,), (4, 5), (3, 5, 2), (2, 5, 2, 3)],  # (C,), (N, C), (N, C, d1), (N, C, d1, d2)
        ["mean", "sum", "none"],
        [0.0, 0.3],  # label_smoothing
        [False, True],  # class weights
        [-100, 2],  # ignore_index
        [False, True],  # probability targets
    )
    if not (case[5] and case[4] != -100)  # (PyTorch refuses ignore_index with probabilities)
]


@pytest.mark.parametrize("fn", ["cross_entropy", "cross_entropy_composed"])
@pytest.mark.parametrize("shape, reduction, smoothing, weighted, ignore, probs", CE_GRID)
def test_cross_entropy_grid(fn, shape, reduction, smoothing, weighted, ignore, probs):
    rng = np.random.default_rng(len(shape) * 31 + int(smoothing * 10))
    classes = shape[0] if len(shape) == 1 else shape[1]
    if probs:
        target = rng.random(shape)
        target /= target.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)
    else:
        target = rng.integers(0, classes, () if len(shape) == 1 else (shape[0],) + shape[2:])
        if target.size:
            target.flat[0] = ignore
    weight = rng.random(classes) + 0.5 if weighted else None
    ours, theirs = _pair(rng.standard_normal(shape))
    options = dict(reduction=reduction, label_smoothing=smoothing, ignore_index=ignore)
    got = getattr(F, fn)(
        ours, ta.tensor(target), None if weight is None else ta.tensor(weight), **options
    )
    want = TF.cross_entropy(
        theirs, torch.tensor(target), None if weight is None else torch.tensor(weight), **options
    )
    _close(got, want)
    upstream = rng.standard_normal(got.shape)
    got.backward(ta.tensor(upstream))
    want.backward(torch.tensor(upstream))
    _close(ours.grad, theirs.grad)


@pytest.mark.parametrize("shape", [(4, 5), (3, 5, 2)])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_grid(shape, reduction, weighted):
    rng = np.random.default_rng(7)
    target = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    target.flat[0] = -100
    weight = rng.random(shape[1]) if weighted else None
    ours, theirs = _pair(rng.standard_normal(shape))
    got = F.nll_loss(
        ours, target, None if weight is None else ta.tensor(weight), reduction=reduction
    )
    want = TF.nll_loss(
        theirs,
        torch.tensor(target),
        None if weight is None else torch.tensor(weight),
        reduction=reduction,
    )
    _close(got, want)
    got.sum().backward()
    want.sum().backward()
    _close(ours.grad, theirs.grad)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_other_losses_with_weights(reduction):
    rng = np.random.default_rng(3)
    a, b, w = rng.random((3, 4)), rng.random((3, 4)), rng.random((3, 4))
    pos = rng.random(4) + 0.5
    for name, extra_ours, extra_theirs in [
        ("mse_loss", {"weight": ta.tensor(w)}, {"weight": torch.tensor(w)}),
        ("l1_loss", {"weight": ta.tensor(w)}, {"weight": torch.tensor(w)}),
        ("smooth_l1_loss", {"beta": 0.3}, {"beta": 0.3}),
        ("binary_cross_entropy", {"weight": ta.tensor(w)}, {"weight": torch.tensor(w)}),
        (
            "binary_cross_entropy_with_logits",
            {"weight": ta.tensor(w), "pos_weight": ta.tensor(pos)},
            {"weight": torch.tensor(w), "pos_weight": torch.tensor(pos)},
        ),
    ]:
        ours, theirs = _pair(a)
        got = getattr(F, name)(ours, ta.tensor(b), reduction=reduction, **extra_ours)
        want = getattr(TF, name)(theirs, torch.tensor(b), reduction=reduction, **extra_theirs)
        _close(got, want)
        got.sum().backward()
        want.sum().backward()
        _close(ours.grad, theirs.grad)


# ------------------------------------------------------------------------------ activations
@pytest.mark.parametrize(
    "name, args",
    [
        ("elu", (0.7,)),
        ("elu", (2,)),
        ("leaky_relu", (0.2,)),
        ("hardtanh", (-0.5, 0.25)),
        ("softplus", (2.0, 1.0)),
        ("silu", ()),
        ("relu", ()),
    ],
)
def test_activations_with_their_number_arguments(name, args):
    x = np.linspace(-3, 3, 13)
    ours, theirs = _pair(x)
    got, want = getattr(F, name)(ours, *args), getattr(TF, name)(theirs, *args)
    _close(got, want)
    got.sum().backward()
    want.sum().backward()
    _close(ours.grad, theirs.grad)


@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_implicit_dim_as_pytorch(ndim, log):
    x = np.random.default_rng(ndim).standard_normal((2, 3, 4, 5)[:ndim])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = (F.log_softmax if log else F.softmax)(ta.tensor(x))
        want = (TF.log_softmax if log else TF.softmax)(torch.tensor(x))
    _close(got, want)


def test_softmax_dtype_as_pytorch():
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float16)
    got = F.log_softmax(ta.tensor(x), 1, dtype=ta.float32)
    want = TF.log_softmax(torch.tensor(x), 1, dtype=torch.float32)
    assert got.dtype == np.float32
    _close(got, want, 1e-6)


# ------------------------------------------------------------------------ layers and F forms
@pytest.mark.parametrize("shape, normalized", [((5, 4), (4,)), ((2, 3, 4), (3, 4))])
@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(shape, normalized, eps):
    rng = np.random.default_rng(1)
    (x, xt), (w, wt) = _pair(rng.standard_normal(shape)), _pair(rng.standard_normal(normalized))
    got, want = F.rms_norm(x, normalized, w, eps), TF.rms_norm(xt, normalized, wt, eps)
    _close(got, want)
    (got * got).sum().backward()
    (want * want).sum().backward()
    _close(x.grad, xt.grad)
    _close(w.grad, wt.grad)


def test_scaled_dot_product_attention_enable_gqa():
    rng = np.random.default_rng(2)
    (q, qt), (k, kt), (v, vt) = (
        _pair(rng.standard_normal(s)) for s in ((2, 6, 3, 5), (2, 3, 4, 5), (2, 1, 4, 7))
    )
    got = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    want = TF.scaled_dot_product_attention(qt, kt, vt, is_causal=True, enable_gqa=True)
    _close(got, want)
    got.sum().backward()
    want.sum().backward()
    for ours, theirs in ((q, qt), (k, kt), (v, vt)):
        _close(ours.grad, theirs.grad)


def test_embedding_options():
    rng = np.random.default_rng(4)
    table = rng.standard_normal((6, 3)) * 2
    ids = np.array([[0, 2, 0], [5, 2, 1]])
    for options in (
        {"padding_idx": 2},
        {"padding_idx": -1, "scale_grad_by_freq": True},
        {"max_norm": 1.5, "norm_type": 1.0},
    ):
        ours, theirs = _pair(table.copy())
        got, want = (
            F.embedding(ids, ours, **options),
            TF.embedding(torch.tensor(ids), theirs, **options),
        )
        _close(got, want, 1e-7)
        _close(ours.detach(), theirs.detach(), 1e-7)  # (max_norm renormalises the table in place)
        got.sum().backward()
        want.sum().backward()
        _close(ours.grad, theirs.grad)


def test_std_and_var_edge_cases():
    for values in ([1.0, 1.0, 1.0], [[1.0, 1.0], [1.0, 3.0]]):
        ours, theirs = _pair(np.array(values))
        with np.errstate(divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ours.std(dim=-1).sum().backward()
        theirs.std(dim=-1).sum().backward()
        _close(ours.grad, theirs.grad)
    data = (1e5 + np.random.default_rng(0).standard_normal(4000)).astype(np.float32)
    exact = torch.tensor(data.astype(np.float64)).var().item()
    ours, theirs = ta.tensor(data).var(dim=0).item(), torch.tensor(data).var().item()
    assert abs(ours - exact) / exact < 1e-6  # (PyTorch's float32 var: 5e-5 off here)
    assert abs(ours - exact) <= abs(theirs - exact)


# ------------------------------------------------------------------------------------ Module
class _Ours(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(7, 4, padding_idx=0)
        self.body = nn.Sequential(
            OrderedDict([("norm", nn.RMSNorm(4)), ("fc", nn.Linear(4, 4)), ("act", nn.GELU())])
        )
        self.scales = nn.ParameterList([nn.Parameter(ta.ones(4)), nn.Parameter(ta.zeros(4))])
        self.extra = nn.ParameterDict({"shift": nn.Parameter(ta.zeros(4))})
        self.head = nn.Linear(4, 7, bias=False)
        self.register_buffer("mask", ta.ones(4))
        self.register_buffer("cache", ta.zeros(4), persistent=False)

    def forward(self, ids):
        h = self.body(self.embed(ids)) * self.scales[0] + self.scales[1] + self.extra["shift"]
        return self.head(h * self.mask)


class _Theirs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(7, 4, padding_idx=0)
        self.body = torch.nn.Sequential(
            OrderedDict(
                [
                    ("norm", torch.nn.RMSNorm(4)),
                    ("fc", torch.nn.Linear(4, 4)),
                    ("act", torch.nn.GELU()),
                ]
            )
        )
        self.scales = torch.nn.ParameterList(
            [torch.nn.Parameter(torch.ones(4)), torch.nn.Parameter(torch.zeros(4))]
        )
        self.extra = torch.nn.ParameterDict({"shift": torch.nn.Parameter(torch.zeros(4))})
        self.head = torch.nn.Linear(4, 7, bias=False)
        self.register_buffer("mask", torch.ones(4))
        self.register_buffer("cache", torch.zeros(4), persistent=False)

    def forward(self, ids):
        h = self.body(self.embed(ids)) * self.scales[0] + self.scales[1] + self.extra["shift"]
        return self.head(h * self.mask)


def test_state_dict_names_order_and_loading_both_ways():
    ours, theirs = _Ours(), _Theirs()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    ours.load_state_dict(theirs.state_dict())  # PyTorch's tensors, loaded in place
    ids = np.array([[1, 0, 6], [3, 3, 2]])
    _close(ours(ids), theirs(torch.tensor(ids)), 1e-6)
    back = {k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()}
    theirs.load_state_dict(back)
    assert sorted(back) == sorted(theirs.state_dict())


def test_sequential_slices_and_conversions_side_by_side():
    ours, theirs = _Ours(), _Theirs()
    assert list(ours.body[1:].state_dict()) == list(theirs.body[1:].state_dict())
    assert list(ours.scales[1:].state_dict()) == list(theirs.scales[1:].state_dict())
    for model in (ours, theirs):
        model.double()
    assert ours.head.weight.dtype == np.float64 and theirs.head.weight.dtype == torch.float64
    assert ours.mask.dtype == np.float64 and theirs.mask.dtype == torch.float64


def test_full_backward_hook_arguments_match_pytorchs():
    rng = np.random.default_rng(5)
    ours, theirs = nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    seen = {"ours": [], "theirs": []}
    ours.register_full_backward_hook(lambda m, gi, go: seen["ours"].append((gi, go)))
    theirs.register_full_backward_hook(lambda m, gi, go: seen["theirs"].append((gi, go)))
    x, xt = _pair(rng.standard_normal((4, 3)))
    upstream = rng.standard_normal((4, 2))
    ours(x).backward(ta.tensor(upstream))
    theirs(xt).backward(torch.tensor(upstream))
    (grad_in, grad_out), (grad_in_t, grad_out_t) = seen["ours"][0], seen["theirs"][0]
    _close(grad_in[0], grad_in_t[0])
    _close(grad_out[0], grad_out_t[0])
