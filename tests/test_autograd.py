"""`ta.autograd` and `backward(create_graph=True)` with PyTorch's meanings (issue 26), no torch
needed: what `.grad` is after a graph-making backward, `retain_graph`'s default, what
`autograd.grad` returns and refuses, a derivative that nests (x**4 -> 24x), the shapes, types
and values of `autograd.functional`, two classic uses (a WGAN-GP gradient penalty, a one-step
MAML update), a user's `Function` under `create_graph`, and the backward pass drawn as ops.

Every number written in below is what torch 2.13 gives for the same program in float64 (the
scenario functions here take the library as `L`, so `scenario(torch)` reproduces them). The op
by op comparison with PyTorch itself is tests/test_autograd_vs_torch.py; gradgradcheck's own
reports are tests/test_gradcheck.py. This module must not need torch.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn.viz import to_dot, trace

TOLERANCE = 1e-9


def _params(names: list) -> list:
    return [pytest.param(name, id=name) for name in names]


def leaf(values) -> ta.Tensor:
    return ta.tensor(values, dtype=ta.float64, requires_grad=True)


def f64(values) -> ta.Tensor:
    return ta.tensor(values, dtype=ta.float64)


def close(tensor, expected) -> None:
    np.testing.assert_allclose(tensor.detach().numpy(), expected, rtol=TOLERANCE, atol=TOLERANCE)


# ------------------------------------------------------------ backward(create_graph=True)


def test_create_graph_gives_a_grad_with_a_graph_of_its_own():
    x = leaf([1.0, 2.0, 3.0])
    (x**3).sum().backward(create_graph=True)
    assert isinstance(x.grad, ta.Tensor)
    assert x.grad.requires_grad and x.grad.grad_fn is not None and not x.grad.is_leaf
    close(x.grad, [3.0, 12.0, 27.0])
    (second,) = ta.autograd.grad(x.grad.sum(), x)  # d/dx of 3x^2 summed
    close(second, [6.0, 12.0, 18.0])


def test_without_create_graph_the_grad_is_a_plain_tensor():
    x = leaf([1.0, 2.0])
    (x**3).sum().backward()
    assert not x.grad.requires_grad and x.grad.grad_fn is None


def test_retain_graph_defaults_to_create_graph():
    x = leaf([1.0, 2.0, 3.0])
    y = (x**3).sum()
    y.backward(create_graph=True)
    y.backward()  # the graph was kept: the second pass accumulates
    close(x.grad, [6.0, 24.0, 54.0])


@pytest.mark.parametrize(
    "first",
    [{}, {"create_graph": True, "retain_graph": False}],
    ids=["plain", "create_graph without retain_graph"],
)
def test_a_second_backward_through_a_released_graph_says_retain_graph(first):
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(**first)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_true_lets_a_plain_backward_run_twice():
    x = leaf([1.0, 2.0])
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(x.grad, 2 * (np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0]))))


def test_create_graph_accumulates_with_recorded_ops():
    x = leaf([1.0, 2.0])
    (x**3).sum().backward(create_graph=True)
    (x**3).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    close(x.grad, [6.0, 24.0])
    close(ta.autograd.grad(x.grad.sum(), x)[0], [12.0, 24.0])  # torch 2.13


def test_create_graph_with_a_gradient_that_has_a_graph():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (x * x).backward(gradient=w, create_graph=True)
    close(x.grad, [6.0, 16.0])
    close(ta.autograd.grad(x.grad.sum(), w)[0], [2.0, 4.0])  # torch 2.13


def test_create_graph_with_inputs_fills_only_those():
    p, q = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    (p * p * q).sum().backward(inputs=[p], create_graph=True)
    assert q.grad is None and p.grad.requires_grad
    close(p.grad, [6.0, 16.0])
    grad_p, grad_q = ta.autograd.grad(p.grad.sum(), [p, q])  # torch 2.13: [6, 8], [2, 4]
    close(grad_p, [6.0, 8.0])
    close(grad_q, [2.0, 4.0])


def test_hooks_and_retain_grad_see_gradients_with_a_graph():
    x = leaf([1.0, 2.0])
    h = x * x
    seen = []
    h.register_hook(lambda g: seen.append((g.requires_grad, g.grad_fn is not None)))
    h.retain_grad()
    h.exp().sum().backward(create_graph=True)
    assert seen == [(True, True)]  # as torch 2.13
    assert h.grad.requires_grad and h.grad.grad_fn is not None


# ------------------------------------------------------------------------ autograd.grad


def test_grad_returns_a_tuple_of_tensors_and_touches_no_grad():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = (a * b).sum()
    found = ta.autograd.grad(out, a, retain_graph=True)
    assert type(found) is tuple and len(found) == 1 and isinstance(found[0], ta.Tensor)
    close(found[0], [3.0, 4.0])
    grad_a, grad_b = ta.autograd.grad(out, [a, b])
    close(grad_a, [3.0, 4.0])
    close(grad_b, [1.0, 2.0])
    assert a.grad is None and b.grad is None
    assert not grad_a.requires_grad and grad_a.grad_fn is None


def test_grad_leaves_an_existing_grad_alone():
    a = leaf([1.0, 2.0])
    (a * a).sum().backward()
    ta.autograd.grad((a * a * a).sum(), a)
    close(a.grad, [2.0, 4.0])


def test_grad_of_a_non_leaf_input():
    x = leaf([1.0, 2.0])
    h = x * 2
    out = (h * h).sum()
    (grad_h,) = ta.autograd.grad(out, h, retain_graph=True)
    close(grad_h, [4.0, 8.0])
    grad_h, grad_x = ta.autograd.grad(out, [h, x])  # one below the other
    close(grad_h, [4.0, 8.0])
    close(grad_x, [8.0, 16.0])


def test_grad_of_a_non_leaf_input_with_create_graph_reaches_the_leaf():
    x = leaf([1.0, 2.0])
    h = x.exp()
    (grad_h,) = ta.autograd.grad((h * h).sum(), h, create_graph=True)  # 2 e^x
    close(ta.autograd.grad(grad_h.sum(), x)[0], 2 * np.exp([1.0, 2.0]))


def test_grad_create_graph_results_can_be_differentiated():
    x = leaf([1.0, 2.0])
    y = (x.exp()).sum()
    (g,) = ta.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    close(ta.autograd.grad(g.sum(), x, retain_graph=True)[0], np.exp([1.0, 2.0]))
    close(ta.autograd.grad(y, x)[0], np.exp([1.0, 2.0]))  # retained: create_graph


def test_an_unused_input_is_an_error_naming_it():
    a, c = leaf([1.0, 2.0]), leaf([5.0])
    out = (a * a).sum()
    with pytest.raises(RuntimeError, match=r"inputs\[1\]") as caught:
        ta.autograd.grad(out, [a, c], retain_graph=True)
    assert "allow_unused=True" in str(caught.value)


def test_allow_unused_gives_none_and_materialize_grads_zeros():
    a, c = leaf([1.0, 2.0]), leaf([5.0])
    out = (a * a).sum()
    grad_a, grad_c = ta.autograd.grad(out, [a, c], retain_graph=True, allow_unused=True)
    close(grad_a, [2.0, 4.0])
    assert grad_c is None
    found = ta.autograd.grad(out, [a, c], allow_unused=True, materialize_grads=True)
    assert isinstance(found[1], ta.Tensor) and found[1].shape == (1,)
    close(found[1], [0.0])


def test_grad_outputs_weight_a_non_scalar_output():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    v = a * b
    found = ta.autograd.grad(v, a, grad_outputs=f64([10.0, 100.0]), retain_graph=True)
    close(found[0], [30.0, 400.0])
    grad_a, grad_b = ta.autograd.grad([v], [a, b], grad_outputs=[f64([10.0, 100.0])])
    close(grad_a, [30.0, 400.0])
    close(grad_b, [10.0, 200.0])


def test_a_non_scalar_output_needs_grad_outputs():
    a = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="one-element|scalar"):
        ta.autograd.grad(a * 3, a)


def test_grad_outputs_of_the_wrong_shape_is_an_error():
    a = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"\(3,\).*\(2,\)"):
        ta.autograd.grad(a * 3, a, grad_outputs=f64([1.0, 1.0, 1.0]))


def test_grad_of_several_outputs_adds_their_gradients():
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    grad_a, grad_b = ta.autograd.grad([(a * a).sum(), (a * b).sum()], [a, b])
    close(grad_a, [5.0, 8.0])
    close(grad_b, [1.0, 2.0])
    weights = [f64(2.0), f64(-1.0)]
    (grad_a,) = ta.autograd.grad([(a * a).sum(), (a * b).sum()], [a], grad_outputs=weights)
    close(grad_a, [1.0, 4.0])
    mixed = [(a * a).sum(), a * 3]  # None: the one-element output's implied gradient
    close(ta.autograd.grad(mixed, a, grad_outputs=[None, f64([1.0, 1.0])])[0], [5.0, 7.0])


def test_an_input_that_does_not_require_grad_is_an_error():
    a, const = leaf([1.0, 2.0]), f64([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        ta.autograd.grad((a * const).sum(), const)
    with pytest.raises(RuntimeError, match="does not require grad"):
        ta.autograd.grad(const.sum(), a)


def test_grad_twice_through_a_released_graph_says_retain_graph():
    a = leaf([1.0, 2.0])
    out = a.exp().sum()
    ta.autograd.grad(out, a)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        ta.autograd.grad(out, a)


def test_grad_edge_cases_as_pytorch():
    a = leaf([1.0, 2.0])
    close(ta.autograd.grad(a.sum().reshape(1), a)[0], [1.0, 1.0])  # one element: implied
    close(ta.autograd.grad(a, a, grad_outputs=ta.ones_like(a))[0], [1.0, 1.0])
    first, second = ta.autograd.grad((a * a).sum(), [a, a])  # the same input twice
    close(first, [2.0, 4.0])
    close(second, [2.0, 4.0])


def test_autograd_backward_adds_the_gradients_of_several_tensors():
    p = leaf([1.0, 2.0])
    ta.autograd.backward([(p * p).sum(), (p * 3).sum()])
    close(p.grad, [5.0, 7.0])
    q = leaf([1.0, 2.0])
    ta.autograd.backward(q * q, grad_tensors=f64([1.0, 10.0]))
    close(q.grad, [2.0, 40.0])


# ---------------------------------------------------------- a derivative that nests: x**4


def test_the_fourth_power_nests_to_24x_and_then_24():
    x = leaf([0.5, -1.0, 2.0])
    derivatives = []
    out = (x**4).sum()
    for _ in range(4):
        (out,) = ta.autograd.grad(out, x, create_graph=True)
        derivatives.append(out)
        out = out.sum()
    close(derivatives[0], [0.5, -4.0, 32.0])  # 4x^3
    close(derivatives[1], [3.0, 12.0, 48.0])  # 12x^2
    close(derivatives[2], [12.0, -24.0, 48.0])  # 24x
    close(derivatives[3], [24.0, 24.0, 24.0])  # 24
    assert all(d.requires_grad for d in derivatives)
    (fifth,) = ta.autograd.grad(out, x, allow_unused=True)  # torch 2.13: zeros, not None
    close(fifth, [0.0, 0.0, 0.0])


def test_the_fourth_power_nests_through_backward_too():
    x = leaf([0.5, -1.0, 2.0])
    (x**4).sum().backward(create_graph=True)
    first = x.grad
    x.grad = None
    first.sum().backward(create_graph=True)
    second = x.grad
    x.grad = None
    second.sum().backward()
    close(x.grad, [12.0, -24.0, 48.0])


# ------------------------------------------------------------------ autograd.functional

X = np.array([[0.5, -1.0, 2.0], [0.1, 0.2, 0.3]])
Y = np.array([0.3, -0.7, 1.1])
Z = np.array([0.9, -0.4])
V_OUT = np.array([1.0, -2.0])
V_X = np.array([[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]])
V_Y = np.array([0.2, 1.0, -0.5])


def rows(x):  # (2, 3) -> (2,)
    return (x.tanh() * x).sum(dim=1)


def pair(y, z):  # (3,), (2,) -> ((3,), ())
    return (y * z.sum()).exp(), (y**2).sum() * z.prod()


def energy(y):  # (3,) -> ()
    return (y.sin() * y).sum() + y.prod()


def energy2(y, z):  # (3,), (2,) -> ()
    return (y.sin() * z.sum()).sum() + (z**3).sum() * y.sum()


def functional_calls(L) -> dict:
    """Each call of `L.autograd.functional` checked below (the same program gave the literals)."""
    AF = L.autograd.functional

    def t(a):
        return L.tensor(a, dtype=L.float64)

    x, y, z = t(X), t(Y), t(Z)
    return {
        "jacobian rows": lambda: AF.jacobian(rows, x),
        "jacobian pair": lambda: AF.jacobian(pair, (y, z)),
        "hessian energy": lambda: AF.hessian(energy, y),
        "hessian energy2": lambda: AF.hessian(energy2, (y, z)),
        "vjp rows": lambda: AF.vjp(rows, x, t(V_OUT)),
        "jvp rows": lambda: AF.jvp(rows, x, t(V_X)),
        "jvp pair": lambda: AF.jvp(pair, (y, z), (t(V_Y), t(Z))),
        "hvp energy": lambda: AF.hvp(energy, y, t(V_Y)),
        "vhp energy2": lambda: AF.vhp(energy2, (y, z), (t(V_Y), t(Z))),
        "hvp energy2": lambda: AF.hvp(energy2, (y, z), (t(V_Y), t(Z))),
    }


# torch 2.13, float64: a list is a Tensor, a Python tuple a tuple (the nesting PyTorch returns)
FUNCTIONAL = {
    "jacobian rows": [
        [[0.8553410237429735, -1.181568497569791, 1.1053292297821458], [0.0, 0.0, 0.0]],
        [[0.0, 0.0, 0.0], [0.1986746237096998, 0.3895839168181273, 0.5658537009995797]],
    ],
    "jacobian pair": (
        (
            [[0.5809171213641415, 0.0, 0.0], [0.0, 0.3523440448593567, 0.0],
             [0.0, 0.0, 0.8666265089336976]],
            [[0.3485502728184849, 0.3485502728184849], [-0.4932816628030994, -0.4932816628030994],
             [1.906578319654135, 1.906578319654135]],
        ),
        ([-0.21600000000000003, 0.504, -0.7920000000000001], [-0.7160000000000001, 1.611]),
    ),
    "hessian energy": [
        [1.82201691625281, 1.1, -0.7],
        [1.1, 1.0787319935025934, 0.3],
        [-0.7, 0.3, -0.07313585321642452],
    ],
    "hessian energy2": (
        (
            [[-0.14776010333066977, 0.0, 0.0], [0.0, 0.3221088436188455, 0.0],
             [0.0, 0.0, -0.4456036800307177]],
            [[3.3853364891256064, 1.4353364891256062], [3.1948421872844888, 1.2448421872844886],
             [2.8835961214255774, 0.9335961214255775]],
        ),
        (
            [[3.3853364891256064, 3.1948421872844888, 2.8835961214255774],
             [1.4353364891256062, 1.2448421872844886, 0.9335961214255775]],
            [[3.780000000000001, 0.0], [0.0, -1.6800000000000006]],
        ),
    ),
    "vjp rows": (
        [2.9207078947374034, 0.13683564724295366],
        [[0.8553410237429735, -1.181568497569791, 1.1053292297821458],
         [-0.3973492474193996, -0.7791678336362546, -1.1317074019991593]],
    ),
    "jvp rows": (
        [2.9207078947374034, 0.13683564724295366],
        [-0.24998820603917227, 0.5770561207637034],
    ),
    "jvp pair": (
        ([1.161834242728283, 0.7046880897187134, 1.7332530178673953], -0.6444000000000001),
        ([0.29045856068207077, 0.10570321345780703, 0.5199759053602186], -0.43200000000000005),
    ),
    "hvp energy": (
        1.2889365391323644,
        [1.8144033832505624, 1.1487319935025933, 0.1965679266082122],
    ),
    "vhp energy2": (
        0.7367549397425421,
        ([2.443116223896669, 2.6995299372610897, 2.444599900728148],
         [5.832111424396823, 1.7371114243968213]),
    ),
    "hvp energy2": (
        0.7367549397425421,
        ([2.443116223896669, 2.6995299372610897, 2.4445999007281474],
         [5.832111424396823, 1.7371114243968213]),
    ),
}  # fmt: skip


def same_structure(found, expected, where: str) -> None:
    """`found` nests tuples exactly as `expected` does, with Tensors of its values where
    `expected` has a list or a number."""
    if isinstance(expected, tuple):
        assert type(found) is tuple, f"{where}: {type(found).__name__}, PyTorch's tuple"
        assert len(found) == len(expected), (
            f"{where}: {len(found)} items, PyTorch's {len(expected)}"
        )
        for i, (f, e) in enumerate(zip(found, expected)):
            same_structure(f, e, f"{where}[{i}]")
        return
    assert isinstance(found, ta.Tensor), f"{where}: {type(found).__name__}, PyTorch's Tensor"
    expected = np.asarray(expected)
    assert found.shape == expected.shape, (
        f"{where}: shape {found.shape}, PyTorch's {expected.shape}"
    )
    assert found.dtype == ta.float64, where
    assert not found.requires_grad, f"{where}: requires grad without create_graph"
    np.testing.assert_allclose(
        found.numpy(), expected, rtol=TOLERANCE, atol=TOLERANCE, err_msg=where
    )


@pytest.mark.parametrize("name", list(FUNCTIONAL))
def test_functional_shapes_and_values_as_pytorch(name):
    same_structure(functional_calls(ta)[name](), FUNCTIONAL[name], name)


def test_functional_tuple_input_gives_tuples_single_input_a_tensor():
    AF = ta.autograd.functional
    x, y = f64(X), f64(Y)
    assert isinstance(AF.jacobian(rows, x), ta.Tensor)
    one = AF.jacobian(rows, (x,))
    assert type(one) is tuple and len(one) == 1 and one[0].shape == (2, 2, 3)
    hess = AF.hessian(energy, (y,))  # a tuple of tuples, even for one input
    assert type(hess) is tuple and type(hess[0]) is tuple and hess[0][0].shape == (3, 3)
    out, (vjp,) = AF.vjp(rows, (x,), f64(V_OUT))
    assert isinstance(out, ta.Tensor) and vjp.shape == (2, 3)
    out, vjp = AF.vjp(energy, y)  # v may be left out for a one-element output
    assert out.shape == () and vjp.shape == (3,)
    out, jvp = AF.jvp(lambda a: a**3, f64(0.7))  # and for a one-element input
    close(jvp, 1.47)


def test_functional_leaves_the_callers_tensors_alone():
    y = leaf(Y)
    ta.autograd.functional.hessian(energy, y)
    ta.autograd.functional.hvp(energy, y, f64(V_Y))
    assert y.grad is None


def cube(a):
    return a**3


def quartic(a):
    return (a**4).sum()


# call: (what it computes at w, the scalar made of it, d scalar / dw as torch 2.13 gives it)
WITH_A_GRAPH = {
    "jacobian": (lambda AF, w, **k: AF.jacobian(cube, w, **k), lambda j: j.diagonal().sum()),
    "hessian": (lambda AF, w, **k: AF.hessian(quartic, w, **k), lambda h: h.diagonal().sum()),
    "vjp": (lambda AF, w, **k: AF.vjp(cube, w, ta.ones_like(w), **k)[1], lambda g: g.sum()),
    "hvp": (lambda AF, w, **k: AF.hvp(quartic, w, ta.ones_like(w), **k)[1], lambda g: g.sum()),
}
SLOPES = {"jacobian": [6.0, 12.0], "hessian": [24.0, 48.0], "vjp": [6.0, 12.0], "hvp": [24.0, 48.0]}


@pytest.mark.parametrize("call", list(WITH_A_GRAPH))
def test_functional_create_graph_keeps_a_graph_to_the_inputs(call):
    compute, scalar = WITH_A_GRAPH[call]
    w = leaf([1.0, 2.0])
    found = compute(ta.autograd.functional, w, create_graph=True)
    assert found.requires_grad
    close(ta.autograd.grad(scalar(found), w)[0], SLOPES[call])
    assert not compute(ta.autograd.functional, w).requires_grad


@pytest.mark.parametrize(
    "call",
    ["jacobian", "vjp", "hessian", "hvp", "jacobian create_graph"],
)
def test_functional_strict_refuses_an_output_independent_of_an_input(call):
    """PyTorch's strict=True: an input the output does not depend on (or, for the Hessian, a
    gradient that does not depend on the input) is a RuntimeError rather than zeros."""
    AF = ta.autograd.functional
    y = f64(Y)
    with pytest.raises(RuntimeError, match="strict"):
        if call == "jacobian":
            AF.jacobian(lambda a, b: a * 2, (y, y), strict=True)
        elif call == "vjp":
            AF.vjp(lambda a, b: (a * 2).sum(), (y, y), strict=True)
        elif call == "hessian":
            AF.hessian(lambda a: (a * 2).sum(), y, strict=True)
        elif call == "hvp":
            AF.hvp(lambda a: (a * 2).sum(), y, y, strict=True)
        else:
            AF.jacobian(lambda a: a * 2, y, strict=True, create_graph=True)


@pytest.mark.parametrize(
    "call",
    ["hessian of a linear function", "hessian of relu", "hvp of a linear function",
     "vhp of a linear function", "jacobian of a constant"],
)  # fmt: skip
def test_functional_gives_zeros_where_a_derivative_does_not_depend_on_the_input(call):
    """Without strict, PyTorch answers zeros (torch 2.13 for each of these)."""
    AF = ta.autograd.functional
    y = f64(Y)
    if call == "hessian of a linear function":
        found, shape = AF.hessian(lambda a: (a * 2).sum(), y), (3, 3)
    elif call == "hessian of relu":
        found, shape = AF.hessian(lambda a: a.relu().sum(), y), (3, 3)
    elif call == "hvp of a linear function":
        found, shape = AF.hvp(lambda a: (a * 2).sum(), y, y)[1], (3,)
    elif call == "vhp of a linear function":
        found, shape = AF.vhp(lambda a: (a * 2).sum(), y, y)[1], (3,)
    else:
        found, shape = AF.jacobian(lambda a: ta.ones(3, dtype=ta.float64), y), (3, 3)
    assert found.shape == shape
    close(found, np.zeros(shape))


@pytest.mark.parametrize("call", ["vjp", "jvp", "hvp", "vhp"])
def test_functional_v_of_the_wrong_shape_is_a_runtime_error(call):
    """PyTorch: RuntimeError("v has invalid size: should be ... but got ...")."""
    AF = ta.autograd.functional
    x, y = f64(X), f64(Y)
    with pytest.raises(RuntimeError, match=r"\(3,\)"):
        if call == "vjp":
            AF.vjp(rows, x, y)
        elif call == "jvp":
            AF.jvp(rows, x, y)
        else:
            getattr(AF, call)(energy, f64(X[0, :2]), y)


def test_functional_misuse_is_a_type_error_or_runtime_error_as_pytorch():
    AF = ta.autograd.functional
    y = f64(Y)
    with pytest.raises(TypeError):
        AF.jacobian(lambda a: a, [1.0, 2.0])
    with pytest.raises(TypeError):
        AF.jacobian(lambda a: 3.0, y)
    with pytest.raises(RuntimeError):
        AF.hvp(rows, f64(X), f64(V_X))  # not a one-element output
    with pytest.raises(RuntimeError):
        AF.vjp(rows, f64(X))  # v left out for a two-element output
    with pytest.raises(RuntimeError):
        AF.jvp(rows, f64(X))  # v left out for a six-element input


# --------------------------------------------------- a gradient penalty (WGAN-GP), one step

REAL = np.array([[0.3, -1.2, 0.8], [1.5, 0.2, -0.4]])
FAKE = np.array([[-0.6, 0.9, 0.1], [0.4, -0.3, 1.1]])
MIX = np.array([[0.25], [0.7]])
CRITIC = [
    np.array([[0.5, -0.3, 0.8], [0.1, 0.9, -0.6], [-0.7, 0.2, 0.4], [0.3, 0.3, -0.2]]),  # W1
    np.array([0.1, -0.2, 0.05, 0.3]),  # b1
    np.array([[0.6, -0.9, 0.4, 0.7]]),  # W2
    np.array([-0.1]),  # b2
]


def critic_layers(L, kind: str) -> tuple:
    """(score(x), parameters) of a Linear(3, 4) -> tanh -> Linear(4, 1) critic."""
    if kind == "nn.Linear":
        critic = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 1)).to(L.float64)
        params = list(critic.parameters())
        with L.no_grad():
            for p, value in zip(params, CRITIC):
                p.copy_(L.tensor(value))
        return critic, params
    w1, b1, w2, b2 = params = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in CRITIC]
    if kind == "F.linear":
        linear = L.nn.functional.linear
    else:

        def linear(x, w, b):
            return x @ w.transpose(0, 1) + b

    return (lambda x: linear(linear(x, w1, b1).tanh(), w2, b2)), params


def gradient_penalty(L, kind: str) -> tuple:
    """((‖d critic / d x̂‖ - 1)² averaged over the batch, backpropagated to the critic."""
    critic, params = critic_layers(L, kind)
    x_hat = L.tensor(MIX * REAL + (1 - MIX) * FAKE, dtype=L.float64, requires_grad=True)
    score = critic(x_hat)  # (N, 1)
    (slope,) = L.autograd.grad(score, x_hat, grad_outputs=L.ones_like(score), create_graph=True)
    penalty = ((slope.norm(2, dim=1) - 1) ** 2).mean()
    penalty.backward()
    return penalty, slope, params


# torch 2.13, float64
PENALTY = 0.04034385388103503
SLOPE = [
    [0.1874280760621082, -0.7255718028739923, 1.0117333707270975],
    [0.06955548438317422, -0.7303436837842023, 0.841695523672072],
]
CRITIC_GRADS = [
    [[-0.02410522106471022, -0.1225164497725723, 0.15415838589226738],
     [-0.035041473038324375, 0.21396301484280317, -0.2563608020495598],
     [0.022062473622118738, -0.06816637359208678, 0.08501176436208636],
     [0.044064482350733805, -0.12422258687862056, 0.1859771306756421]],
    [-0.050009512175830724, 0.04438486892587769, -0.003158186663026987, 0.044338410059281075],
    [[0.2911970569535143, -0.3743678936545352, 0.02978268981708453, -0.09611269023438876]],
    None,  # the penalty does not depend on the last bias: its .grad stays None
]  # fmt: skip


@pytest.mark.parametrize("kind", _params(["x @ W.T + b", "F.linear", "nn.Linear"]))
def test_gradient_penalty_as_pytorch(kind):
    penalty, slope, params = gradient_penalty(ta, kind)
    assert penalty.item() == pytest.approx(PENALTY, rel=TOLERANCE, abs=TOLERANCE)
    close(slope, SLOPE)
    for i, (p, expected) in enumerate(zip(params, CRITIC_GRADS)):
        if expected is None:
            assert p.grad is None, f"parameter {i}"
        else:
            close(p.grad, expected)


# ------------------------------------------------------ one step of meta-learning (MAML)

SUPPORT_X = np.array([[0.2, -0.5], [1.0, 0.3], [-0.7, 0.8]])
SUPPORT_Y = np.array([[0.4], [-0.1], [0.6]])
QUERY_X = np.array([[0.5, 0.5], [-0.3, -0.9]])
QUERY_Y = np.array([[0.2], [-0.5]])
META = [
    np.array([[0.3, -0.6], [0.8, 0.1], [-0.4, 0.5]]),  # W1 (hidden 3, in 2)
    np.array([0.05, -0.1, 0.2]),  # b1
    np.array([[0.7, -0.2, 0.4]]),  # W2
    np.array([0.1]),  # b2
]
INNER_LR = 0.4


def maml_step(L, kind: str, second_order: bool = True) -> tuple:
    """Inner SGD step on the support set (w' = w - lr * grad, the gradient with a graph),
    outer loss on the query set at w', backpropagated to w."""
    if kind == "F.linear":
        linear = L.nn.functional.linear
    else:

        def linear(x, w, b):
            return x @ w.transpose(0, 1) + b

    params = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in META]

    def net(x, w1, b1, w2, b2):
        return linear(linear(L.tensor(x, dtype=L.float64), w1, b1).tanh(), w2, b2)

    def mse(pred, y):
        return ((pred - L.tensor(y, dtype=L.float64)) ** 2).mean()

    inner = mse(net(SUPPORT_X, *params), SUPPORT_Y)
    grads = L.autograd.grad(inner, params, create_graph=second_order)
    adapted = [p - INNER_LR * g for p, g in zip(params, grads)]
    outer = mse(net(QUERY_X, *adapted), QUERY_Y)
    outer.backward()
    return inner, outer, params


# torch 2.13, float64
INNER_LOSS, OUTER_LOSS = 0.09836950007355816, 0.5898464904070881
META_GRADS = [
    [[-0.3984293748717389, -0.4302019562989948], [0.1518736176520974, 0.2084930129454331],
     [-0.2663882509823464, -0.46699958203350367]],
    [-0.12011370270907307, -0.1136893367211394, 0.11424315315607303],
    [[0.4603305417818924, -0.5115980375011404, -0.22403878675742195]],
    [-0.07858173452429718],
]  # fmt: skip


@pytest.mark.parametrize("kind", _params(["x @ W.T + b", "F.linear"]))
def test_one_maml_step_as_pytorch(kind):
    inner, outer, params = maml_step(ta, kind)
    assert inner.item() == pytest.approx(INNER_LOSS, rel=TOLERANCE)
    assert outer.item() == pytest.approx(OUTER_LOSS, rel=TOLERANCE)
    for p, expected in zip(params, META_GRADS):
        close(p.grad, expected)


def test_first_order_maml_differs_so_the_second_order_is_what_is_checked():
    _, _, params = maml_step(ta, "x @ W.T + b", second_order=False)
    gap = max(np.abs(p.grad.numpy() - np.asarray(e)).max() for p, e in zip(params, META_GRADS))
    assert gap > 1e-3


# ---------------------------------------------------------------- a user's Function


class ScaledSine(ta.autograd.Function):
    """out = sin(a) * b;  da = cos(a) * b * dout,  db = sin(a) * dout (Tensor ops)"""

    tensor_backward = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.sin(a) * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * a.cos() * b, grad_out * a.sin()


class ScaledSineInNumPy(ta.autograd.Function):
    """The same op with a backward on NumPy arrays: once differentiable."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.sin(a) * b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out * np.cos(a) * b, grad_out * np.sin(a)


A, B = [0.3, -1.2], [2.0, 0.5]


def test_a_numpy_backward_under_create_graph_names_the_class_and_the_fix():
    a, b = leaf(A), leaf(B)
    with pytest.raises(RuntimeError) as caught:
        ScaledSineInNumPy.apply(a, b).sum().backward(create_graph=True)
    message = str(caught.value)
    assert "ScaledSineInNumPy" in message
    assert "tensor_backward = True" in message and "Tensor op" in message
    with pytest.raises(RuntimeError, match="ScaledSineInNumPy"):
        ta.autograd.grad(ScaledSineInNumPy.apply(a, b).sum(), a, create_graph=True)
    ScaledSineInNumPy.apply(a, b).sum().backward()  # the first order still works
    close(a.grad, np.cos(A) * np.array(B))


def test_a_tensor_backward_is_differentiable_twice():
    a, b = leaf(A), leaf(B)
    ScaledSine.apply(a, b).sum().backward(create_graph=True)
    close(a.grad, np.cos(A) * np.array(B))
    close(b.grad, np.sin(A))
    assert a.grad.requires_grad
    grad_a, grad_b = ta.autograd.grad(a.grad.sum(), [a, b])  # -sin(a) b, cos(a)
    close(grad_a, -np.sin(A) * np.array(B))
    close(grad_b, np.cos(A))


def test_a_tensor_backward_matches_the_built_in_ops_to_the_third_order():
    found = []
    for f in (ScaledSine.apply, lambda a, b: a.sin() * b):
        a, b = leaf(A), leaf(B)
        (g,) = ta.autograd.grad(f(a, b).sum(), a, create_graph=True)
        (gg,) = ta.autograd.grad(g.sum(), a, create_graph=True)
        ggg = ta.autograd.grad(gg.sum(), [a, b])
        found.append([g, gg, *ggg])
    for ours, built_in in zip(*found):
        close(ours, built_in.detach().numpy())
    assert ta.autograd.gradgradcheck(ScaledSine.apply, [leaf(A), leaf(B)])


def test_a_tensor_backward_in_an_ordinary_pass_runs_twice_with_retain_graph():
    a, b = leaf(A), leaf(B)
    y = ScaledSine.apply(a, b).sum()
    y.backward(retain_graph=True)
    y.backward()
    close(a.grad, 2 * np.cos(A) * np.array(B))
    assert not a.grad.requires_grad


# ------------------------------------------------------------- the backward pass drawn


def _op_names(root) -> list:
    return [op.node.name for op in trace(root).ops]


def test_the_gradient_graph_is_drawn_with_the_backward_ops():
    x = ta.Tensor([1.0, 2.0], dtype=ta.float64, requires_grad=True, name="x")
    y = (x.tanh() * x).sum()
    forward_ops = set(_op_names(y))
    y.backward(create_graph=True)
    backward_ops = _op_names(x.grad)
    assert forward_ops == {"Tanh", "Mul", "Sum"}
    # d/dx (x tanh x) = tanh x + x (1 - tanh² x): a Sub and an Add that only the gradient has,
    # connected to the forward's Tanh (whose output the formula reads) and to x
    assert {"Sub", "Add", "Mul", "Tanh"} <= set(backward_ops)
    dot = to_dot(x.grad, all_ops=True)
    tooltips = re.findall(r'tooltip="([^"]*)"', dot)
    for op in ("Tanh:", "Sub:", "Add:", "Mul:"):
        assert any(t.startswith(op) for t in tooltips), (op, tooltips)
    assert "x" in re.findall(r"<b>([^<]*)</b>", dot)  # the leaf, by name
    assert to_dot(x.grad)  # the grouped picture too


def test_the_second_derivative_graph_is_drawn_too():
    x = ta.Tensor([0.5, -1.0], dtype=ta.float64, requires_grad=True, name="x")
    (g,) = ta.autograd.grad((x**4).sum(), x, create_graph=True)
    (gg,) = ta.autograd.grad(g.sum(), x, create_graph=True)
    assert "Pow" in _op_names(gg) or "Mul" in _op_names(gg)
    assert "digraph" in to_dot(gg, all_ops=True)


def test_layer_norm_third_derivative_matches_central_differences():
    """gradgradcheck of layer norm's gradient: its third derivative, against central
    differences (where PyTorch 2.13's fused layer_norm is off: test_autograd_vs_torch.py)."""
    rng = np.random.default_rng(7)
    x = ta.tensor(rng.standard_normal((2, 5)), dtype=ta.float64, requires_grad=True)
    w = ta.tensor(rng.standard_normal(5), dtype=ta.float64, requires_grad=True)
    b = ta.tensor(rng.standard_normal(5), dtype=ta.float64, requires_grad=True)
    weights = ta.tensor(rng.standard_normal((2, 5)), dtype=ta.float64)

    def gradient(x, w, b):
        out = ta.nn.functional.layer_norm(x, (5,), w, b)
        return ta.autograd.grad((out * out * weights).sum(), (x, w, b), create_graph=True)

    assert ta.autograd.gradgradcheck(gradient, (x, w, b))
