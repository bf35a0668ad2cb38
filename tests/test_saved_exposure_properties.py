"""Property test of the read-only rule (saved.py): after a forward pass, a write by the user into
any array they can reach either fails or leaves the gradients exactly as they were.

Hypothesis draws a small program: a parameter and an input, each made in one of the ways a user
makes tensors (a copy, `from_numpy` of their own array, `detach()`, a result changed in place
under no_grad, data assigned with `.data =`), passed through a few view ops (reshape, transpose,
slicing) and a few ops that save their inputs (mul, matmul, exp), down to a sum. Then it writes
into one of the arrays the user holds (their own ndarray, or `.data` of any tensor they have), and
runs backward. The gradient must equal the one of the same program run without the write, and
every array the user owns must be writable again once backward has run."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as ta

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

MAKERS = ("copy", "from_numpy", "detach", "inplace_result", "assigned")
VIEWS = ("none", "reshape", "transpose", "slice")
USES = ("mul", "matmul", "exp_mul")


def _make(how: str, values: np.ndarray, requires_grad: bool, held: list) -> ta.Tensor:
    """A (4, 4) tensor made the way `how` says. Every array the user can reach goes in `held` as
    (array, theirs): `theirs` when it is the user's own memory (writable once backward ran)."""
    if how == "copy":
        t = ta.Tensor(values.copy(), requires_grad=requires_grad)
    elif how == "from_numpy":
        own = values.copy()
        held.append((own, True))
        t = ta.from_numpy(own, requires_grad=requires_grad)
    elif how == "detach":
        source = ta.Tensor(values.copy()) * 1.0  # an op's result, then detached
        held.append((source.data, False))  # an op's result: read-only for good
        t = source.detach().requires_grad_(requires_grad)
    elif how == "inplace_result":
        with ta.no_grad():
            t = ta.Tensor(values.copy()) * 1.0
            t.add_(0.0)  # now a writable copy the user can reach through .data
        t.requires_grad_(requires_grad)
    else:  # "assigned"
        own = values.copy()
        held.append((own, True))
        t = ta.Tensor(np.zeros((4, 4)), requires_grad=requires_grad)
        t.data = own
    held.append((t.data, how != "detach"))
    return t


def _view(how: str, t: ta.Tensor) -> ta.Tensor:
    if how == "reshape":
        return t.reshape(2, 8).reshape(4, 4)
    if how == "transpose":
        return t.T
    if how == "slice":
        return t[:, ::-1]
    return t


def _program(p_maker, x_maker, p_view, x_view, use, values_p, values_x):
    held: list = []
    p = _make(p_maker, values_p, True, held)
    x = _make(x_maker, values_x, False, held)
    pv, xv = _view(p_view, p), _view(x_view, x)
    held += [(pv.data, False), (xv.data, False)]  # (the tensors' own data is in already)
    if use == "mul":
        out = pv * xv
    elif use == "matmul":
        out = xv @ pv
    else:
        out = pv.exp() * xv
    return p, out.sum(), held


@settings(max_examples=150, deadline=None)
@given(
    p_maker=st.sampled_from(MAKERS),
    x_maker=st.sampled_from(MAKERS),
    p_view=st.sampled_from(VIEWS),
    x_view=st.sampled_from(VIEWS),
    use=st.sampled_from(USES),
    target=st.integers(0, 20),
)
def test_a_write_after_forward_fails_or_changes_no_gradient(
    p_maker, x_maker, p_view, x_view, use, target
):
    rng = np.random.default_rng(0)
    values_p, values_x = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    p, loss, _ = _program(p_maker, x_maker, p_view, x_view, use, values_p, values_x)
    loss.backward()
    expected = p.grad.copy()

    p, loss, held = _program(p_maker, x_maker, p_view, x_view, use, values_p, values_x)
    array = held[target % len(held)][0]
    try:
        array[0, 0] = 7.0  # the user's write, between forward and backward
    except ValueError as error:
        assert "read-only" in str(error)
    loss.backward()
    np.testing.assert_array_equal(p.grad, expected)
    assert all(a.flags.writeable for a, theirs in held if theirs)  # no lock left behind
