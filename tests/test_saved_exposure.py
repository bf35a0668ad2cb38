"""Which saved arrays the lock table holds (saved.py, issue 12): only memory the user may hold.

An op's result (and a buffer it made and returns a view of) is read-only for good with no lock
to give back, and a node whose inputs the user cannot reach locks nothing; the data of a leaf, a
view of it, or an array the user handed in is locked while a live node has it saved, and
writable again after backward. Each test writes where a user would and checks the gradient
(or the error) against the value worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import saved


def _leaf(values, **kw):
    return ta.Tensor(np.asarray(values, dtype=np.float64), requires_grad=True, **kw)


def test_a_view_of_a_leaf_saved_by_a_later_op_locks_the_leaf():
    x = _leaf(np.arange(6.0))
    w = _leaf(np.ones(6))
    view = x.reshape(2, 3)  # a view of x's memory, made by an op
    loss = (view * w.reshape(2, 3)).sum()  # Mul saves the view
    with pytest.raises(ValueError, match="read-only"):
        x.data[0] = 100.0
    assert saved.saved_by(x.data) == ["Mul"]
    loss.backward()
    np.testing.assert_array_equal(w.grad, np.arange(6.0))  # the values forward saw
    x.data[0] = 100.0  # released: writable again
    assert x.data[0] == 100.0


def test_a_view_of_a_from_numpy_array_stays_tied_to_the_users_array():
    user = np.arange(4.0)
    x = ta.from_numpy(user)
    w = _leaf([1.0, 2.0, 3.0, 4.0])
    loss = (x[1:] * w[1:]).sum()
    with pytest.raises(ValueError, match="read-only"):
        user[2] = -1.0
    loss.backward()
    np.testing.assert_array_equal(w.grad, [0.0, 1.0, 2.0, 3.0])
    user[2] = -1.0
    assert user.flags.writeable


def test_a_no_grad_result_changed_in_place_is_locked_like_a_leaf():
    x = _leaf([1.0, 2.0])
    with ta.no_grad():
        y = x * 2.0  # read-only from birth
    y.add_(1.0)  # in place: y now holds a writable copy that the user can reach
    w = _leaf([3.0, 5.0])
    loss = (y * w).sum()
    with pytest.raises(ValueError, match="read-only"):
        y.data[0] = 0.0
    loss.backward()
    np.testing.assert_array_equal(w.grad, [3.0, 5.0])
    y.data[0] = 0.0


def test_data_assigned_to_a_non_leaf_is_locked_when_saved():
    x = _leaf([1.0, 2.0])
    y = x * 1.0
    mine = np.array([7.0, 11.0])
    y.data = mine  # the caller keeps `mine`
    w = _leaf([1.0, 1.0])
    loss = (y * w).sum()
    with pytest.raises(ValueError, match="read-only"):
        mine[0] = 0.0
    loss.backward()
    np.testing.assert_array_equal(w.grad, [7.0, 11.0])
    mine[0] = 0.0  # released: the caller's array is writable again


def test_an_ops_own_buffers_are_read_only_for_good_without_a_lock():
    q = _leaf(np.random.default_rng(0).standard_normal((1, 4, 8)))
    out = ta.nn.functional.scaled_dot_product_attention(q * 1.0, q * 1.0, q * 1.0)
    node = out.grad_fn
    weights = node.saved_tensors[-1]  # the attention weights: a buffer of the op's own
    assert not weights.flags.writeable  # (the op freezes it: ops._util.frozen)
    assert saved.saved_by(weights) == []  # nothing to give back at release
    assert node._lock_ref is None  # its inputs are op results: it locks nothing
    assert saved.saved_by(q.data) == ["Mul", "Mul", "Mul"]


def test_a_matmul_of_a_batch_returns_an_array_that_owns_its_memory():
    a = _leaf(np.ones((3, 2, 4)))
    out = a @ _leaf(np.ones((4, 5)))
    assert out.data.base is None and not out.data.flags.writeable


def test_a_view_of_an_ops_private_buffer_is_read_only_through_and_through():
    x = _leaf(np.arange(6.0))
    y = (x * 2.0).reshape(3, 2)
    base = y.data.base
    assert base is not None and not base.flags.writeable  # Mul's result: read-only from birth
    assert not y._exposed


def test_a_users_op_that_saves_a_global_array_locks_it():
    table = np.array([1.0, 2.0, 3.0])

    class ScaleByTable(ta.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(table)
            return a * table

        @staticmethod
        def backward(ctx, grad_out):
            (t,) = ctx.saved_tensors
            return (grad_out * t,)

    x = _leaf([1.0, 1.0, 1.0])
    loss = ScaleByTable.apply(x).sum()
    with pytest.raises(ValueError, match="read-only"):
        table[0] = 10.0
    loss.backward()
    np.testing.assert_array_equal(x.grad, [1.0, 2.0, 3.0])
    table[0] = 10.0  # released: the user's array is theirs again


def test_an_array_over_a_python_buffer_is_locked_and_given_back():
    buffer = bytearray(32)
    user = np.frombuffer(buffer, dtype=np.float64)  # its base is a memoryview, not an ndarray
    w = _leaf([1.0, 2.0, 3.0, 4.0])
    loss = (ta.from_numpy(user) * w).sum()
    with pytest.raises(ValueError, match="read-only"):
        user[0] = 5.0
    loss.backward()
    np.testing.assert_array_equal(w.grad, np.zeros(4))
    user[0] = 5.0  # released: writable again
    assert saved.saved_by(user) == []


def test_an_ndarray_subclass_of_the_users_is_locked_like_an_ndarray():
    # found on the read: the lock skipped any array whose class was not exactly np.ndarray, so
    # a write into such an array between forward and backward silently changed the gradient
    class Marked(np.ndarray):
        pass

    own = np.ones(3).view(Marked)
    w = ta.from_numpy(own, requires_grad=True)
    loss = (w * w).sum()
    with pytest.raises(ValueError, match="read-only"):
        own[0] = 5.0
    loss.backward()
    np.testing.assert_array_equal(w.grad, [2.0, 2.0, 2.0])
    own[0] = 5.0  # writable again once backward released the graph


def test_backward_gives_every_hold_back_so_collecting_the_graph_later_does_nothing(monkeypatch):
    """Released nodes forget their holds (saved.unlock_saved): the graph's collection after
    backward runs no unlock (before, every locking node's weak reference fired once more)."""
    calls = []  # the ids of the holds given back (not the holds: they must be free to go)
    monkeypatch.setattr(
        saved, "_unlock", lambda ref, real=saved._unlock: calls.append(id(ref)) or real(ref)
    )
    user = np.arange(4.0)
    w = ta.from_numpy(user, requires_grad=True)
    loss = (w * w).sum() + (w * 2.0).sum()  # two nodes lock `user`
    nodes = [n for n in ta.engine.graph_order([loss.grad_fn]) if n._lock_ref is not None]
    ours = {id(n._lock_ref) for n in nodes}
    assert len(ours) == 2
    loss.backward()
    assert sum(c in ours for c in calls) == 2 and all(n._lock_ref is None for n in nodes)
    user[0] = 5.0  # writable again
    del loss, nodes
    import gc

    gc.collect()
    assert sum(c in ours for c in calls) == 2  # collecting the graph gave nothing back again
    np.testing.assert_array_equal(w.grad, [2.0, 4.0, 6.0, 8.0])
