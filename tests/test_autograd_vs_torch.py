"""Higher-order gradients against PyTorch itself, op family by op family (issue 26): the same
float64 inputs in both libraries, the gradient g = grad(f(x), x, create_graph=True), then the
gradient of (g * v).sum() for a fixed v (a Hessian-vector product), and for some ops the
derivative once more; each must equal PyTorch's to 1e-9. Then `autograd.functional`'s hessian
and hvp of a small attention head against `torch.autograd.functional`.

Skipped without torch (tests/test_autograd.py holds PyTorch's numbers for the API and the
classic uses, so that part runs everywhere). This module only compares; it must not test the
API's errors or return types (test_autograd.py does).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402

import tinygrad_attn as ta  # noqa: E402

TOLERANCE = 1e-9
RNG = np.random.default_rng(26)


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def positive(*shape: int) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, shape)


# Constants (no gradient), the same arrays in both libraries.
INDEX = np.array([2, 0, 2, 1])  # a repeated index: the gradient must add up
GATHER_INDEX = np.array([[0, 3, 3], [1, 1, 0], [2, 0, 1]])
TOKENS = np.array([[1, 4, 1], [0, 2, 4]])
TARGET = np.array([0, 3, 1])
TARGET_IGNORED = np.array([0, -100, 2])
MASK = RNG.random((3, 4)) > 0.5
ATTN_MASK = np.tril(np.ones((3, 3), dtype=bool))
ATTN_FLOAT_MASK = RNG.standard_normal((3, 3))


def const(L, array: np.ndarray):
    return L.tensor(array)


# name: (f(L, F, *inputs) with L the library and F its nn.functional; the float64 inputs)
CASES = {
    # elementwise
    "add": (lambda L, F, a, b: a + b, normal(3, 4), normal(4)),
    "sub": (lambda L, F, a, b: a - b, normal(3, 4), normal(3, 1)),
    "mul": (lambda L, F, a, b: a * b, normal(3, 4), normal(3, 4)),
    "div": (lambda L, F, a, b: a / b, normal(3, 4), positive(4)),
    "rdiv": (lambda L, F, a: 2.0 / a, positive(3, 4)),
    "neg": (lambda L, F, a: -a, normal(3, 4)),
    "pow 3": (lambda L, F, a: a**3, normal(3, 4)),
    "pow 2.5": (lambda L, F, a: a**2.5, positive(3, 4)),
    "pow -1.5": (lambda L, F, a: a**-1.5, positive(3, 4)),
    "pow tensor**tensor": (lambda L, F, a, b: a**b, positive(3, 4), normal(3, 4)),
    "pow number**tensor": (lambda L, F, a: 2.0**a, normal(3, 4)),
    "exp": (lambda L, F, a: a.exp(), normal(3, 4)),
    "log": (lambda L, F, a: a.log(), positive(3, 4)),
    "sqrt": (lambda L, F, a: a.sqrt(), positive(3, 4)),
    "tanh": (lambda L, F, a: a.tanh(), normal(3, 4)),
    "sigmoid": (lambda L, F, a: a.sigmoid(), normal(3, 4)),
    "relu": (lambda L, F, a: a.relu(), normal(3, 4)),
    "abs": (lambda L, F, a: a.abs(), normal(3, 4)),
    "sin": (lambda L, F, a: a.sin(), normal(3, 4)),
    "cos": (lambda L, F, a: a.cos(), normal(3, 4)),
    "clamp": (lambda L, F, a: a.clamp(-0.5, 0.5), normal(3, 4)),
    "clamp min": (lambda L, F, a: L.clamp(a, min=0.1), normal(3, 4)),
    "maximum": (lambda L, F, a, b: L.maximum(a, b), normal(3, 4), normal(3, 4)),
    "minimum": (lambda L, F, a, b: L.minimum(a, b), normal(3, 4), normal(4)),
    "F.softplus": (lambda L, F, a: F.softplus(a), normal(3, 4)),
    "F.silu": (lambda L, F, a: F.silu(a), normal(3, 4)),
    # reductions
    "sum": (lambda L, F, a: a.sum(), normal(3, 4)),
    "sum dim": (lambda L, F, a: a.sum(dim=1, keepdim=True), normal(3, 4)),
    "mean": (lambda L, F, a: a.mean(dim=0), normal(3, 4)),
    "var": (lambda L, F, a: a.var(dim=1), normal(3, 4)),
    "var correction=0": (lambda L, F, a: a.var(correction=0), normal(3, 4)),
    "std": (lambda L, F, a: a.std(dim=0), normal(3, 4)),
    "prod": (lambda L, F, a: a.prod(dim=1), normal(3, 4)),
    "prod all": (lambda L, F, a: a.prod(), normal(2, 3)),
    "norm": (lambda L, F, a: a.norm(), normal(3, 4)),
    "norm dim": (lambda L, F, a: a.norm(dim=-1), normal(3, 4)),
    "norm p=3": (lambda L, F, a: L.norm(a, p=3, dim=1), normal(3, 4)),
    "max": (lambda L, F, a: a.max(), normal(3, 4)),
    "max dim": (lambda L, F, a: a.max(dim=1).values, normal(3, 4)),
    "min dim": (lambda L, F, a: a.min(dim=0)[0], normal(3, 4)),
    "amax": (lambda L, F, a: a.amax(dim=1), normal(3, 4)),
    "logsumexp": (lambda L, F, a: a.logsumexp(dim=1), normal(3, 4)),
    "cumsum": (lambda L, F, a: a.cumsum(dim=1), normal(3, 4)),
    # products
    "matmul": (lambda L, F, a, b: L.matmul(a, b), normal(3, 4), normal(4, 2)),
    "@ matrix-vector": (lambda L, F, a, b: a @ b, normal(3, 4), normal(4)),
    "@ vector-vector": (lambda L, F, a, b: a @ b, normal(4), normal(4)),
    "@ batched broadcast": (lambda L, F, a, b: a @ b, normal(2, 3, 4), normal(4, 2)),
    "bmm": (lambda L, F, a, b: L.bmm(a, b), normal(2, 3, 4), normal(2, 4, 2)),
    "einsum bij,bjk->bik": (
        lambda L, F, a, b: L.einsum("bij,bjk->bik", a, b),
        normal(2, 3, 4),
        normal(2, 4, 2),
    ),
    "einsum ij,ij->i": (lambda L, F, a, b: L.einsum("ij,ij->i", a, b), normal(3, 4), normal(3, 4)),
    "F.linear": (lambda L, F, x, w, b: F.linear(x, w, b), normal(3, 4), normal(2, 4), normal(2)),
    "F.linear no bias": (lambda L, F, x, w: F.linear(x, w), normal(3, 4), normal(2, 4)),
    # softmax family
    "softmax": (lambda L, F, a: a.softmax(dim=-1), normal(3, 4)),
    "F.softmax dim=0": (lambda L, F, a: F.softmax(a, dim=0), normal(3, 4)),
    "log_softmax": (lambda L, F, a: a.log_softmax(dim=-1), normal(3, 4)),
    "F.log_softmax": (lambda L, F, a: F.log_softmax(a, dim=1), normal(2, 3, 4)),
    # layers
    "F.layer_norm": (
        lambda L, F, x, w, b: F.layer_norm(x, (4,), w, b),
        normal(3, 4),
        normal(4),
        normal(4),
    ),
    "F.layer_norm no affine": (lambda L, F, x: F.layer_norm(x, (4,)), normal(3, 4)),
    # PyTorch 2.13's fused layer_norm has a wrong THIRD derivative (test below), so at third
    # order ours is compared with PyTorch's derivatives of the layer norm written out.
    "F.layer_norm vs its formula": (
        lambda L, F, x, w, b: (
            F.layer_norm(x, (4,), w, b) if L is ta else _layer_norm_formula(x, w, b)
        ),
        normal(3, 4),
        normal(4),
        normal(4),
    ),
    "F.gelu": (lambda L, F, a: F.gelu(a), normal(3, 4)),
    "F.gelu tanh": (lambda L, F, a: F.gelu(a, approximate="tanh"), normal(3, 4)),
    "nn.GELU": (lambda L, F, a: L.nn.GELU(approximate="tanh")(a), normal(3, 4)),
    "F.cross_entropy": (lambda L, F, z: F.cross_entropy(z, const(L, TARGET)), normal(3, 4)),
    "F.cross_entropy label_smoothing": (
        lambda L, F, z: F.cross_entropy(z, const(L, TARGET), label_smoothing=0.1),
        normal(3, 4),
    ),
    "F.cross_entropy ignore_index": (
        lambda L, F, z: F.cross_entropy(z, const(L, TARGET_IGNORED), reduction="sum"),
        normal(3, 4),
    ),
    # indexing
    "getitem basic": (lambda L, F, a: a[1:, ::2], normal(3, 4)),
    "getitem integer": (lambda L, F, a: a[1], normal(3, 4)),
    "getitem advanced": (lambda L, F, a: a[const(L, INDEX)], normal(3, 4)),
    "getitem advanced dim 1": (lambda L, F, a: a[:, const(L, INDEX)], normal(3, 4)),
    "getitem bool mask": (lambda L, F, a: a[const(L, MASK)], normal(3, 4)),
    "gather": (lambda L, F, a: a.gather(1, const(L, GATHER_INDEX)), normal(3, 4)),
    "index_select": (lambda L, F, a: a.index_select(0, const(L, INDEX)), normal(3, 4)),
    "F.embedding": (lambda L, F, w: F.embedding(const(L, TOKENS), w), normal(5, 3)),
    # joins
    "cat": (lambda L, F, a, b: L.cat([a, b * a[:1]], dim=0), normal(3, 4), normal(2, 4)),
    "stack": (lambda L, F, a, b: L.stack([a, b, a * b], dim=1), normal(3, 4), normal(3, 4)),
    # selection
    "where": (
        lambda L, F, a, b: L.where(const(L, MASK), a, b),
        normal(3, 4),
        normal(4),
    ),
    "masked_fill": (lambda L, F, a: a.masked_fill(const(L, MASK), 0.5), normal(3, 4)),
    # movement
    "reshape": (lambda L, F, a: a.reshape(2, 6), normal(3, 4)),
    "view -1": (lambda L, F, a: a.view(-1), normal(3, 4)),
    "transpose": (lambda L, F, a: a.transpose(0, 1), normal(3, 4)),
    ".T": (lambda L, F, a: a.T, normal(3, 4)),
    "permute": (lambda L, F, a: a.permute(2, 0, 1), normal(2, 3, 4)),
    "expand": (lambda L, F, a: a.expand(2, 3, 4), normal(3, 1)),
    "unsqueeze squeeze": (lambda L, F, a: a.unsqueeze(0).squeeze(), normal(3, 4)),
    # attention
    "sdpa": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v),
        normal(2, 3, 4),
        normal(2, 3, 4),
        normal(2, 3, 4),
    ),
    "sdpa bool mask": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k, v, attn_mask=const(L, ATTN_MASK)
        ),
        normal(2, 3, 4),
        normal(2, 3, 4),
        normal(2, 3, 4),
    ),
    "sdpa float mask": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k, v, attn_mask=const(L, ATTN_FLOAT_MASK)
        ),
        normal(2, 3, 4),
        normal(2, 3, 4),
        normal(2, 3, 4),
    ),
    "sdpa is_causal dropout_p=0": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(
            q, k, v, dropout_p=0.0, is_causal=True
        ),
        normal(1, 2, 3, 4),
        normal(1, 2, 3, 4),
        normal(1, 2, 3, 4),
    ),
    "sdpa scale": (
        lambda L, F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3),
        normal(3, 2),
        normal(4, 2),
        normal(4, 3),
    ),
}

# A third derivative for a few: the gradient of the Hessian-vector product once more.
THIRD = ["mul", "div", "pow 2.5", "pow tensor**tensor", "exp", "log", "tanh", "sigmoid",
         "sin", "var", "prod", "norm", "logsumexp", "matmul", "softmax", "log_softmax",
         "sdpa", "F.gelu", "F.layer_norm vs its formula"]  # fmt: skip


def _layer_norm_formula(x, w, b, eps: float = 1e-5):
    """Layer norm over the last axis in PyTorch's primitive ops."""
    centred = x - x.mean(-1, keepdim=True)
    return centred / (centred.pow(2).mean(-1, keepdim=True) + eps).sqrt() * w + b


def _params(names: list) -> list:
    return [pytest.param(name, id=name) for name in names]


# name: (the module, made by library L; its input). Differentiated with respect to the input and
# every parameter, whose values are set from fixed arrays (the same in both libraries).
MODULES = {
    "nn.LayerNorm": (lambda L: L.nn.LayerNorm(4), normal(3, 4)),
    "nn.Linear": (lambda L: L.nn.Linear(4, 3), normal(2, 4)),
    "nn.MultiheadAttention": (
        lambda L: SelfAttention(L.nn.MultiheadAttention(4, 2, batch_first=True)),
        normal(2, 3, 4),
    ),
    "nn.MultiheadAttention need_weights=False": (
        lambda L: SelfAttention(L.nn.MultiheadAttention(4, 2), need_weights=False),
        normal(3, 2, 4),
    ),
}


class SelfAttention:
    """mha(x, x, x)'s output, as a callable over x (its weights are the layer's parameters)."""

    def __init__(self, mha, need_weights: bool = True) -> None:
        self.mha, self.need_weights = mha, need_weights

    def named_parameters(self):
        return self.mha.named_parameters()

    def to(self, dtype):
        self.mha.to(dtype)
        return self

    def __call__(self, x):
        return self.mha(x, x, x, need_weights=self.need_weights)[0]


def _weights(shape: tuple, salt: int) -> np.ndarray:
    """A fixed array to contract with or to fill a parameter with (the same in both)."""
    return np.random.default_rng(1000 + salt).standard_normal(shape)


def _op_case(L, name: str) -> tuple:
    """(f, inputs) of CASES[name] in library L."""
    fn, *arrays = CASES[name]
    xs = [L.tensor(a.copy(), dtype=L.float64, requires_grad=True) for a in arrays]
    return (lambda *ts: fn(L, L.nn.functional, *ts)), xs


def _module_case(L, name: str) -> tuple:
    """(f, inputs) of MODULES[name] in library L: the input first, then the parameters."""
    make, array = MODULES[name]
    module = make(L).to(L.float64)
    params = [p for _, p in sorted(module.named_parameters())]
    with L.no_grad():
        for i, p in enumerate(params):
            p.copy_(L.tensor(_weights(tuple(p.shape), 500 + i)))
    x = L.tensor(array.copy(), dtype=L.float64, requires_grad=True)
    return (lambda x, *_: module(x)), [x, *params]


def _derivatives(L, case: tuple, order: int) -> list:
    """[f, g, H v, (the third)] for `case` = (f, inputs), as ndarrays, computed by library L.
    The output is squared and weighted before summing, so that even a linear op's backward is
    differentiated through."""
    fn, xs = case
    out = fn(*xs)
    w = L.tensor(_weights(tuple(out.shape), 0))
    loss = (out * out * w).sum()
    grads = L.autograd.grad(loss, xs, create_graph=True)
    found = [out, *grads]
    for k in range(order - 1):
        vs = [L.tensor(_weights(tuple(x.shape), 1 + k + 10 * i)) for i, x in enumerate(xs)]
        inner = sum((g * v).sum() for g, v in zip(grads, vs))
        grads = L.autograd.grad(inner, xs, create_graph=k < order - 2, allow_unused=True)
        found += [g if g is not None else L.zeros_like(x) for g, x in zip(grads, xs)]
    return [np.array(t.detach().numpy(), dtype=np.float64) for t in found]


def _what(i: int, count: int) -> str:
    if i == 0:
        return "the value"
    order, which = divmod(i - 1, count)
    return f"derivative {order + 1} (input {which})"


def _compare(name: str, make, order: int) -> None:
    with sdpa_kernel([SDPBackend.MATH]):  # (PyTorch's fused CPU kernels have no double backward)
        theirs = _derivatives(torch, make(torch, name), order)
    ours = _derivatives(ta, make(ta, name), order)
    count = (len(theirs) - 1) // order
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        what = f"{name}: {_what(i, count)}"
        assert a.shape == b.shape, f"{what}: shape {a.shape}, PyTorch's {b.shape}"
        np.testing.assert_allclose(a, b, rtol=TOLERANCE, atol=TOLERANCE, err_msg=what)


@pytest.mark.parametrize("name", _params(list(CASES)))
def test_second_derivative_as_pytorch(name):
    _compare(name, _op_case, order=2)


@pytest.mark.parametrize("name", _params(THIRD))
def test_third_derivative_as_pytorch(name):
    _compare(name, _op_case, order=3)


@pytest.mark.parametrize("name", _params(list(MODULES)))
def test_module_second_derivative_as_pytorch(name):
    _compare(name, _module_case, order=2)


# ------------------------------------------- autograd.functional on a small attention head

HEAD_X = normal(3, 4)  # (T, E): three tokens of width 4
HEAD_W = [normal(4, 2) for _ in range(3)]  # (E, D) each: query, key, value
HEAD_OUT_W = normal(3, 2)  # (T, D): weights of the loss


def attention_loss(L, x, wq, wk, wv, projection: str = "matmul"):
    """A one-head causal self-attention, its output squared and weighted into a scalar."""
    if projection == "F.linear":
        F = L.nn.functional
        q, k, v = F.linear(x, wq.T), F.linear(x, wk.T), F.linear(x, wv.T)  # (T, D) each
    else:
        q, k, v = x @ wq, x @ wk, x @ wv  # (T, D) each
    scores = q @ k.transpose(0, 1) / 2**0.5  # (T, T)
    future = L.tensor(np.triu(np.ones((3, 3), dtype=bool), k=1))
    weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)  # (T, T)
    out = weights @ v  # (T, D)
    return (out * out * L.tensor(HEAD_OUT_W)).sum()


def sdpa_loss(L, x, wq, wk, wv):
    """The same head through F.scaled_dot_product_attention(is_causal=True)."""
    out = L.nn.functional.scaled_dot_product_attention(x @ wq, x @ wk, x @ wv, is_causal=True)
    return (out * out * L.tensor(HEAD_OUT_W)).sum()


HEADS = {
    "matmul head": lambda L, *ts: attention_loss(L, *ts),
    "sdpa head": sdpa_loss,
    "F.linear head": lambda L, *ts: attention_loss(L, *ts, projection="F.linear"),
}


def _f64(L, *arrays) -> tuple:
    return tuple(L.tensor(a.copy(), dtype=L.float64) for a in arrays)


def _arrays(value) -> list:
    """Nested tuples of Tensors as a flat list of ndarrays (each with its shape)."""
    if isinstance(value, (tuple, list)):
        return [a for v in value for a in _arrays(v)]
    return [np.array(value.detach().numpy(), dtype=np.float64)]


def _same(ours, theirs, what: str) -> None:
    assert type(ours) is type(theirs) or (
        isinstance(ours, ta.Tensor) and isinstance(theirs, torch.Tensor)
    ), f"{what}: {type(ours).__name__}, PyTorch's {type(theirs).__name__}"
    mine, reference = _arrays(ours), _arrays(theirs)
    assert len(mine) == len(reference), what
    for i, (a, b) in enumerate(zip(mine, reference)):
        assert a.shape == b.shape, f"{what}[{i}]: shape {a.shape}, PyTorch's {b.shape}"
        np.testing.assert_allclose(a, b, rtol=TOLERANCE, atol=TOLERANCE, err_msg=f"{what}[{i}]")


def _both(call) -> tuple:
    with sdpa_kernel([SDPBackend.MATH]):
        theirs = call(torch)
    return call(ta), theirs


@pytest.mark.parametrize("head", _params(list(HEADS)))
def test_hessian_of_an_attention_head_as_pytorch(head):
    loss = HEADS[head]

    def one_input(L):  # the Hessian in the query weights alone: (E, D, E, D)
        x, wk, wv = _f64(L, HEAD_X, HEAD_W[1], HEAD_W[2])
        (wq,) = _f64(L, HEAD_W[0])
        return L.autograd.functional.hessian(lambda w: loss(L, x, w, wk, wv), wq)

    _same(*_both(one_input), f"{head}: hessian in W_q")

    def all_inputs(L):  # a tuple of tuples: one block per pair of inputs
        x, *ws = _f64(L, HEAD_X, *HEAD_W)
        return L.autograd.functional.hessian(lambda *w: loss(L, x, *w), tuple(ws))

    _same(*_both(all_inputs), f"{head}: hessian in (W_q, W_k, W_v)")


@pytest.mark.parametrize("head", _params(list(HEADS)))
@pytest.mark.parametrize("product", ["hvp", "vhp"])
def test_hessian_vector_product_of_an_attention_head_as_pytorch(head, product):
    loss = HEADS[head]
    directions = [_weights(w.shape, 700 + i) for i, w in enumerate([HEAD_X, *HEAD_W])]

    def call(L):
        inputs = _f64(L, HEAD_X, *HEAD_W)
        v = _f64(L, *directions)
        fn = getattr(L.autograd.functional, product)
        return fn(lambda *ts: loss(L, *ts), inputs, v)

    _same(*_both(call), f"{head}: {product}")


def test_jacobian_of_attention_weights_as_pytorch():
    def call(L):
        x, wq, wk = _f64(L, HEAD_X, HEAD_W[0], HEAD_W[1])

        def weights(x):
            return ((x @ wq) @ (x @ wk).transpose(0, 1)).softmax(dim=-1)  # (T, T)

        return L.autograd.functional.jacobian(weights, x)  # (T, T, T, E)

    _same(*_both(call), "jacobian of softmax(q k^T) in x")


def test_pytorchs_fused_layer_norm_third_derivative_is_not_the_formulas():
    """Why the third-order layer norm case compares with the formula: PyTorch's fused
    layer_norm disagrees at third order with its own primitive ops (and with central differences
    of its second derivative), ours agrees with both. When PyTorch fixes it this test fails: then
    compare F.layer_norm directly again."""
    _, xs = _op_case(torch, "F.layer_norm vs its formula")
    fused = _derivatives(
        torch, ((lambda x, w, b: torch.nn.functional.layer_norm(x, (4,), w, b)), xs), 3
    )
    formula = _derivatives(torch, (_layer_norm_formula, xs), 3)
    assert np.allclose(fused[4], formula[4], rtol=1e-9)  # second derivative: the same
    assert not np.allclose(fused[7], formula[7], rtol=1e-6)  # third, input x: not the same
