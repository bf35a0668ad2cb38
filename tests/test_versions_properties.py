"""Property test of the version counters (versions.py): after a forward pass, an in-place write
through any tensor that shares memory with what the graph saved either makes backward refuse
(PyTorch's "modified by an inplace operation") or leaves the gradients exactly as they were.

Hypothesis draws a small program: a parameter and an input, each made in one of the ways a user
makes tensors (a copy, `from_numpy` of their own array, `detach()` of an op's result, a result
changed in place under no_grad, data assigned with `.data =`), passed through a few view ops
(reshape, transpose, slicing) and a few ops that save their inputs (mul, matmul, exp), down to a
sum. Then it writes in place, under no_grad, into one of the tensors the user holds (the tensors
themselves, their views, `.data` of any of them, a `from_numpy` of their own array), and runs
backward. Either backward raises the version error, or the gradient equals the one of the same
program run without the write: never a silently wrong gradient. (A write straight into an
ndarray goes around every tensor: anomaly mode's checksums catch that, tests/test_debug.py.)"""

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
WRITES = ("add_", "setitem", "data", "from_numpy")


def _make(how: str, values: np.ndarray, requires_grad: bool, held: list) -> ta.Tensor:
    """A (4, 4) tensor made the way `how` says; every tensor the user can reach goes in
    `held`."""
    if how == "copy":
        t = ta.Tensor(values.copy(), requires_grad=requires_grad)
    elif how == "from_numpy":
        own = values.copy()
        t = ta.from_numpy(own, requires_grad=requires_grad)
        held.append(ta.from_numpy(own))  # the user's own array, wrapped again
    elif how == "detach":
        source = ta.Tensor(values.copy()) * 1.0  # an op's result, then detached
        held.append(source)
        t = source.detach().requires_grad_(requires_grad)
    elif how == "inplace_result":
        with ta.no_grad():
            t = ta.Tensor(values.copy()) * 1.0
            t.add_(0.0)
        t.requires_grad_(requires_grad)
    else:  # "assigned"
        own = values.copy()
        t = ta.Tensor(np.zeros((4, 4)), requires_grad=requires_grad)
        t.data = own
        held.append(ta.from_numpy(own))
    held.append(t)
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
    held += [pv, xv]
    if use == "mul":
        out = pv * xv
    elif use == "matmul":
        out = xv @ pv
    else:
        out = pv.exp() * xv
    return p, out.sum(), held


def _write(how: str, t: ta.Tensor) -> None:
    with ta.no_grad():
        if how == "add_":
            t.add_(7.0)
        elif how == "setitem":
            t[0, 0] = 7.0
        elif how == "data":
            t.data.mul_(3.0)
        else:
            ta.from_numpy(t.numpy()).fill_(7.0)


@settings(max_examples=200, deadline=None)
@given(
    p_maker=st.sampled_from(MAKERS),
    x_maker=st.sampled_from(MAKERS),
    p_view=st.sampled_from(VIEWS),
    x_view=st.sampled_from(VIEWS),
    use=st.sampled_from(USES),
    write=st.sampled_from(WRITES),
    target=st.integers(0, 20),
)
def test_a_write_after_forward_is_refused_or_changes_no_gradient(
    p_maker, x_maker, p_view, x_view, use, write, target
):
    rng = np.random.default_rng(0)
    values_p, values_x = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    p, loss, _ = _program(p_maker, x_maker, p_view, x_view, use, values_p, values_x)
    loss.backward()
    expected = p.grad.numpy().copy()

    p, loss, held = _program(p_maker, x_maker, p_view, x_view, use, values_p, values_x)
    _write(write, held[target % len(held)])  # the user's write, between forward and backward
    try:
        loss.backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        assert p.grad is None  # refused before any gradient was handed out
        return
    np.testing.assert_array_equal(p.grad.numpy(), expected)
