"""The engine's classic traps: x * x, diamonds, fan-out, deep chains, second backward, hooks."""

import gc
import sys

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape, name=None):
    return Tensor(rng.standard_normal(shape), requires_grad=True, name=name)


def test_x_times_x_counts_both_edges(rng):
    x = leaf(rng, 3)
    y = (x * x).sum()
    assert y.grad_fn.inputs[0].grad_fn.inputs == (x, x)  # two edges, a tuple not a set
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * x.numpy())


def test_diamond_adds_both_paths(rng):
    x = leaf(rng, 4)
    a = x.exp()
    b = a * 3.0
    c = a.tanh()
    (b + c).sum().backward()
    expected = np.exp(x.numpy()) * (3 + (1 - np.tanh(np.exp(x.numpy())) ** 2))
    np.testing.assert_allclose(x.grad, expected, rtol=1e-12)


def test_fan_out_accumulates(rng):
    x = leaf(rng, 2, 3)
    total = x.sum() + (2 * x).sum() + x.mean()
    total.backward()
    np.testing.assert_allclose(x.grad, np.full((2, 3), 1 + 2 + 1 / 6))


def test_chain_of_20000_ops_needs_no_recursion():
    x = Tensor(0.0, requires_grad=True, dtype=np.float64)
    y = x
    for _ in range(20_000):
        y = y + 1.0
    assert sys.getrecursionlimit() < 20_000
    y.backward()
    assert x.grad == 1.0
    assert y.item() == 20_000
    del y
    gc.collect()


def test_second_backward_without_retain_graph_names_the_fix(rng):
    x = leaf(rng, 3)
    y = (x.exp() * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_second_backward_with_retain_graph_accumulates(rng):
    x = leaf(rng, 3)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad, 2 * first)


def test_graph_holds_no_arrays_after_backward(rng):
    x = Tensor(rng.standard_normal((3, 4)), name="x")
    w = leaf(rng, 4, 2, name="w")
    h = (x @ w).tanh()
    loss = (h * h).sum()
    del h
    loss.backward()
    for node in ta.engine.topological_order(loss.grad_fn):
        assert node.released
        assert node._saved is None
        for t in node.inputs:
            # leaves stay (they carry .grad); intermediates are data-less records
            assert t.grad_fn is None or t._data is None
    assert w.grad is not None and loss.item() > 0


def test_no_grad_records_nothing_and_restores(rng):
    x = leaf(rng, 3)
    with ta.no_grad():
        y = x * 2
        assert not ta.is_grad_enabled()
        with ta.enable_grad():
            z = x * 2
    assert ta.is_grad_enabled()
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None

    @ta.no_grad()
    def f(t):
        return t * 3

    assert f(x).grad_fn is None


def test_no_grad_is_thread_local(rng):
    import threading

    x = leaf(rng, 2)
    seen = {}

    def worker():
        seen["grad"] = (x * 2).requires_grad

    with ta.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen["grad"] is True


def test_leaf_hook_sees_total_and_can_replace(rng):
    x = leaf(rng, 3)
    seen = []
    x.register_hook(lambda g: seen.append(g.clone()))
    (x * 2 + x * 3).sum().backward()
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], np.full(3, 5.0))

    y = leaf(rng, 3)
    remove = y.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(y.grad, np.full(3, 10.0))
    remove()
    y.grad = None
    y.sum().backward()
    np.testing.assert_allclose(y.grad, np.ones(3))


def test_non_leaf_hook_and_retain_grad(rng):
    x = leaf(rng, 3)
    h = x * 2
    h.retain_grad()
    h.register_hook(lambda g: g * 0.5)
    (h * h).sum().backward()
    np.testing.assert_allclose(h.grad, 0.5 * 2 * h.numpy())  # hook ran before .grad was kept
    np.testing.assert_allclose(x.grad, 2 * 0.5 * 2 * h.numpy())


def test_gradient_argument_for_non_scalar(rng):
    x = leaf(rng, 2, 3)
    y = x * 3
    y.backward(gradient=np.ones((2, 3)) * 2)
    np.testing.assert_allclose(x.grad, np.full((2, 3), 6.0))


def test_backward_steps_equal_backward(rng):
    def build():
        r = np.random.default_rng(1)
        x = Tensor(r.standard_normal((2, 3)))
        w = Tensor(r.standard_normal((3, 3)), requires_grad=True, name="w")
        return w, (x @ w).softmax(-1).log().sum()

    w1, loss1 = build()
    loss1.backward()
    w2, loss2 = build()
    steps = list(loss2.backward_steps())
    assert [s.op for s in steps] == ["Sum", "Log", "Softmax", "MatMul"]
    assert [s.index for s in steps] == [0, 1, 2, 3]
    np.testing.assert_array_equal(w1.grad, w2.grad)
    matmul = steps[-1]
    assert matmul.grad_inputs[0] is None and matmul.grad_inputs[1].shape == (3, 3)
    assert "MatMul" in str(matmul)


def test_leaf_grads_visible_as_steps_are_yielded(rng):
    w = leaf(rng, 3)
    loss = (w * 2).sum() * 1.0
    for step in loss.backward_steps():
        if step.op == "Mul" and step.inputs[0] is w:
            np.testing.assert_allclose(w.grad, np.full(3, 2.0))
            break
    else:
        pytest.fail("no step for w * 2")


def test_early_stop_leaves_rest_unpropagated(rng):
    w = leaf(rng, 3)
    loss = (w.exp() * 2).sum()
    steps = loss.backward_steps()
    next(steps)
    steps.close()
    assert w.grad is None


def test_custom_function_is_first_class():
    class Cube(ta.Function):
        """out = x**3;  dx = 3 x**2 dout"""

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x**3

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return (3 * x**2 * grad_out,)

    x = Tensor([1.0, -2.0], requires_grad=True, dtype=np.float64)
    y = Cube.apply(x)
    assert y.grad_fn.name == "Cube"
    y.sum().backward()
    np.testing.assert_allclose(x.grad, [3.0, 12.0])
    assert ta.gradcheck(
        lambda t: Cube.apply(t), [Tensor([0.5, 1.5], requires_grad=True, dtype=np.float64)]
    )


def test_backward_returning_wrong_count_is_explained():
    class Broken(ta.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, grad_out):
            return (grad_out,)

    a = Tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Broken.backward returned 1 gradient"):
        Broken.apply(a, a).sum().backward()


def test_a_saved_array_changed_in_place_is_refused_until_released(rng):
    x = leaf(rng, 3)
    y = x * x
    with ta.no_grad():
        x[0] = 5.0
    with pytest.raises(RuntimeError, match="Mul saved its input 0"):
        y.sum().backward()
    y = x * x
    y.sum().backward()
    with ta.no_grad():
        x[0] = 6.0  # released: no node holds it any more
    assert x.numpy()[0] == 6.0


def test_a_graph_dropped_without_backward_leaves_the_arrays_writable(rng):
    x = leaf(rng, 3)
    y = x.exp() * x
    del y
    gc.collect()
    x.numpy()[0] = 1.0
    assert x.numpy()[0] == 1.0


def test_backward_from_a_leaf_gives_it_the_gradient_and_its_hooks_see_it(rng):
    x = leaf(rng, 1)
    x.backward()
    x.backward()  # a second pass adds, as for any leaf
    np.testing.assert_array_equal(x.grad, [2.0])
    seen = []
    w = leaf(rng, 2)
    w.register_hook(lambda g: seen.append(g.clone()) or g * 3)
    w.backward(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(seen[0], [1.0, 2.0])
    np.testing.assert_array_equal(w.grad, [3.0, 6.0])


def test_a_step_keeps_what_the_op_returned_and_gives_what_each_input_received(rng):
    a, b = leaf(rng, 2, 3), leaf(rng, 3)
    c = Tensor(rng.standard_normal((2, 3)))  # a constant: no gradient flows to it
    loss = ((a + b) * c).sum()
    steps = {step.op: step for step in loss.backward_steps()}
    add, mul = steps["Add"], steps["Mul"]
    assert [g.shape for g in add.returned] == [(2, 3), (2, 3)]  # the broadcast shape
    assert [g.shape for g in add.grad_inputs] == [(2, 3), (3,)]  # each input's own shape
    np.testing.assert_allclose(add.grad_inputs[1], add.returned[1].sum(axis=0))
    np.testing.assert_allclose(add.grad_inputs[1], b.grad)
    assert mul.grad_inputs[1] is None  # the constant received nothing
    index, node, grad_output, returned = add  # still the tuple it always was
    assert node is add.node and returned is add.returned and index == add.index


def test_a_pass_stopped_after_several_steps_leaves_the_whole_graph_to_run_again(rng):
    """API.md: the graph is released only when the generator is exhausted, and stopping early
    leaves it as it is (it was released node by node, so a later backward found it 'already
    released' after three steps)."""
    w = leaf(rng, 3)
    loss = ((w * 3).exp() * 2).sum()
    steps = loss.backward_steps()
    taken = [next(steps) for _ in range(3)]
    assert [s.op for s in taken] == ["Sum", "Mul", "Exp"]
    assert taken[0].node.saved_tensors is not None  # an earlier step can still be looked at
    steps.close()
    assert w.grad is None and not any(s.node.released for s in taken)
    loss.backward()
    np.testing.assert_allclose(w.grad, 2 * np.exp(3 * w.numpy()) * 3)
    assert all(s.node.released for s in taken)  # exhausted: released


def test_a_pass_stopped_by_an_error_can_run_again(rng):
    w = leaf(rng, 3)
    y = w.exp()
    calls = []

    def flaky(grad):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a hook failed once")

    y.register_hook(flaky)
    loss = (y * 2).sum()
    with pytest.raises(RuntimeError, match="failed once"):
        loss.backward()
    loss.backward()  # nothing was released by the failed pass
    np.testing.assert_allclose(w.grad, 2 * np.exp(w.numpy()))
