"""Misuse the engine the way users do (issue 13): index arrays refilled between forward and
backward, hooks that return the wrong shape, threads sharing arrays, anomaly mode in another
thread, NaN gradients that must not reach .grad, and writes whose source line is not known.
Torch's values are written in where a value is involved (torch is not a dependency)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.functional as F
from tinygrad_attn import Tensor, nn, optim


@pytest.fixture
def rng():
    return np.random.default_rng(1313)


# ---------------------------------------------------------- item 1: index arrays changed later
def test_an_index_array_refilled_after_forward_does_not_move_the_gradient():
    x = Tensor(np.arange(5.0), requires_grad=True)
    idx = np.array([0, 1, 1])
    y = x[idx]
    idx[0] = 3  # the caller reuses its buffer before backward
    y.backward(np.array([1.0, 10.0, 100.0]))
    np.testing.assert_array_equal(x.grad, [1.0, 110.0, 0.0, 0.0, 0.0])  # torch: same


def test_an_index_list_and_a_tensor_index_refilled_after_forward():
    x = Tensor(np.arange(5.0), requires_grad=True)
    ids = [4, 4, 0]
    y = x[ids]
    ids[0] = 1
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [1.0, 0.0, 0.0, 0.0, 2.0])
    x.grad = None
    t = Tensor(np.array([2, 3]))
    y = x[t]
    t.numpy()[0] = 0  # writable: an index is copied, not locked
    y.sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 1.0, 1.0, 0.0])


def test_embedding_ids_refilled_after_forward():
    ta.manual_seed(0)
    emb = nn.Embedding(6, 3)
    ids = np.array([[1, 2], [2, 5]])
    out = emb(ids)
    ids[:] = 0
    out.sum().backward()
    expected = np.zeros((6, 3))
    expected[1] += 1
    expected[2] += 2
    expected[5] += 1
    np.testing.assert_array_equal(emb.weight.grad, expected)


def test_cross_entropy_targets_refilled_after_forward(rng):
    logits = Tensor(rng.standard_normal((4, 3)), requires_grad=True)
    target = np.array([0, 2, 1, 2])
    loss = F.cross_entropy(logits, target)
    kept = target.copy()
    target[:] = 0  # a label buffer refilled for the next batch
    loss.backward()
    p = np.exp(logits.numpy() - logits.numpy().max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(4), kept] -= 1
    np.testing.assert_allclose(logits.grad, p / 4, rtol=1e-12)


# ------------------------------------------------------------- item 3: hooks of the wrong shape
def test_a_leaf_hook_returning_the_wrong_shape_is_named_with_both_shapes():
    x = Tensor(np.ones(3), requires_grad=True)

    def squash(grad):
        return grad.sum()

    x.register_hook(squash)
    with pytest.raises(RuntimeError) as info:
        (x * 2.0).sum().backward()
    message = str(info.value)
    assert "squash" in message and "shape ()" in message and "(3,)" in message
    assert x.grad is None  # nothing wrong was stored


def test_a_hook_on_an_intermediate_returning_the_wrong_shape_is_blamed_on_the_hook():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    y = x * 3.0
    y.register_hook(lambda g: g[0])
    with pytest.raises(RuntimeError, match=r"hook .*<lambda>.* on the output of Mul") as info:
        y.sum().backward()
    assert "(3,)" in str(info.value) and "(2, 3)" in str(info.value)
    assert "Mul.backward" not in str(info.value)


def test_a_hook_returning_the_right_shape_replaces_the_gradient():
    x = Tensor(np.ones(3), requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [20.0, 20.0, 20.0])


# ------------------------------------------------- item 13: threads sharing a saved array
def _train(shared: np.ndarray, seconds: float, errors: list, seed: int) -> None:
    try:
        rng = np.random.default_rng(seed)
        w = Tensor(rng.standard_normal((shared.shape[1], 2)), requires_grad=True)
        x = ta.from_numpy(shared)  # the same ndarray in both threads, saved by both graphs
        opt = optim.SGD([w], lr=0.01)
        end = time.monotonic() + seconds
        steps = 0
        while time.monotonic() < end or steps < 20:
            opt.zero_grad()
            loss = ((x @ w).tanh() ** 2).mean()
            dropped = (x * 2.0).sum()  # a graph dropped without backward
            del dropped
            loss.backward()
            opt.step()
            assert np.isfinite(w.numpy()).all() and w.grad.shape == w.shape
            steps += 1
    except BaseException as exc:  # noqa: BLE001  (reported to the main thread)
        errors.append(exc)


def test_two_threads_training_on_one_shared_array_for_a_bounded_time():
    shared = np.random.default_rng(0).standard_normal((16, 8))
    errors: list = []
    threads = [threading.Thread(target=_train, args=(shared, 1.5, errors, s)) for s in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors[0]
    assert shared.flags.writeable
    # and the engine is intact: a fresh forward/backward is exact
    w = Tensor(np.ones((8, 1)), requires_grad=True)
    (ta.from_numpy(shared) @ w).sum().backward()
    np.testing.assert_allclose(w.grad[:, 0], shared.sum(axis=0))


# ----------------------------------------------------- item 14: anomaly mode is per thread
def test_anomaly_mode_in_one_thread_does_not_reach_another():
    inside = threading.Event()
    done = threading.Event()
    errors: list = []

    def hunter():
        with ta.detect_anomaly():
            inside.set()
            done.wait(10)

    def bystander():
        inside.wait(10)
        try:
            with np.errstate(divide="ignore"):
                y = Tensor([1.0], requires_grad=True) / 0.0  # inf: allowed outside anomaly mode
            assert np.isinf(y.numpy()).all()
            assert not ta.debug.is_anomaly_enabled()
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            done.set()

    threads = [threading.Thread(target=hunter), threading.Thread(target=bystander)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors[0]


# ------------------------------------ item 16: an anomaly in backward reaches no .grad first
def test_an_anomaly_in_backward_is_raised_before_anything_is_accumulated():
    x = Tensor(np.array([0.0, 1.0]), requires_grad=True)
    y = Tensor(np.array([2.0, 3.0]), requires_grad=True)
    with ta.detect_anomaly(), pytest.raises(ta.AnomalyError, match="Sqrt"):
        (x.sqrt() * y).sum().backward()  # d sqrt(x)/dx is inf at 0 (no NumPy warning: PyTorch's)
    assert x.grad is None
    # y's gradient comes from the Mul step, before Sqrt: that one is finite and stays
    np.testing.assert_allclose(y.grad, np.sqrt([0.0, 1.0]))


def test_a_nan_returned_by_an_op_is_raised_before_its_leaf_grad_changes():
    class Bad(ta.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad_out):
            return grad_out * np.nan

    x = Tensor(np.ones(3), requires_grad=True)
    x.grad = ta.tensor(np.full(3, 7.0))
    with ta.detect_anomaly(), pytest.raises(ta.AnomalyError, match="Bad"):
        Bad.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad, [7.0, 7.0, 7.0])  # untouched


def test_anomaly_mode_explains_an_overflow_inf_in_mul_as_an_overflow():
    x = Tensor(np.array([1e200]), requires_grad=True, dtype=np.float64)
    with ta.detect_anomaly(), np.errstate(over="ignore"):
        with pytest.raises(ta.AnomalyError) as info:
            x * 1e200
    message = str(info.value)
    assert "0 * inf" not in message
    assert "overflow" in message and "1.8e+308" in message


def test_nn_dropout_accepts_p_one_as_pytorch_does():
    drop = nn.Dropout(1.0)
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    out = drop(x)
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 3)))
    out.sum().backward()
    np.testing.assert_array_equal(x.grad, np.zeros((2, 3)))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        nn.Dropout(1.5)
    with pytest.raises(TypeError, match="number"):
        nn.Dropout("0.1")


# ------------------------------------------- gradients that cannot be real: refused, not cast
def test_requires_grad_set_by_hand_on_an_integer_tensor_is_refused_at_backward():
    x = Tensor(np.array([1, 2, 3]))
    x.requires_grad = True  # (requires_grad_() and the constructors refuse this at once)
    loss = (x * 1.5).sum()
    with pytest.raises(TypeError, match=r"input 0 of Cast requires grad but has dtype int64"):
        loss.backward()  # (x * 1.5 is float32: x is cast first, as PyTorch promotes)
    assert x.grad is None  # not [1, 1, 1]: the rounded gradient never reaches .grad


def test_a_complex_grad_assigned_by_hand_is_refused():
    w = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(TypeError, match=r"\.grad: dtype complex128 is not real numbers"):
        w.grad = np.array([1 + 2j, 3j])
    assert w.grad is None
    with pytest.raises(RuntimeError, match=r"\.grad: dtype int64 does not match.*float64"):
        w.grad = np.array([1, 2])  # PyTorch: "assigned grad has data of a different type"
    w.grad = ta.tensor([1.0, 2.0], dtype=ta.float64)
    assert w.grad.dtype == np.float64
