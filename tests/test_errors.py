"""Errors that teach: each classic autodiff trap, and the message it gets.

Each message must name the op, the shapes or dtypes involved, and what to do instead; and no
mistake may leave state behind that corrupts a later computation.
"""

import gc
import warnings

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor, state


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape, name=None):
    return Tensor(rng.standard_normal(shape), requires_grad=True, name=name)


def caught(fn, kind=Exception):
    """Run `fn`, return the exception it raised (the test fails if it raises nothing)."""
    with pytest.raises(kind) as info:
        fn()
    return info.value


# ------------------------------------------------------------- a second backward pass
def test_second_backward_names_the_op_it_reached_and_retain_graph(rng):
    x = leaf(rng, 3)
    loss = (x.exp() * x).sum()
    loss.backward()
    err = caught(loss.backward, RuntimeError)
    assert "already released by an earlier backward()" in str(err)
    assert "reached Sum" in str(err) and "retain_graph=True" in str(err)


def test_saved_tensors_after_release_names_the_op(rng):
    x = leaf(rng, 3)
    y = x * x
    y.sum().backward()
    err = caught(lambda: y.grad_fn.saved_tensors, RuntimeError)
    assert str(err).startswith("Mul: the arrays it saved for backward were freed")
    assert "retain_graph=True" in str(err)


# --------------------------------------------------------------- .grad of a non-leaf
def test_non_leaf_grad_warns_once_per_tensor_naming_op_and_retain_grad(rng):
    x = leaf(rng, 2, 3, name="x")
    hidden = x.tanh()
    hidden.name = "hidden"
    other = x * 2
    (hidden.sum() + other.sum()).backward()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")  # defeat Python's own once-per-line filter
        for _ in range(3):
            assert hidden.grad is None
        assert other.grad is None
    messages = [str(w.message) for w in seen]
    assert len(messages) == 2  # once for `hidden`, once for `other`
    assert "non-leaf tensor 'hidden' (made by Tanh, shape (2, 3))" in messages[0]
    assert ".retain_grad()" in messages[0] and "leaf" in messages[0]
    assert "made by Mul" in messages[1]


def test_retained_non_leaf_grad_does_not_warn(rng):
    x = leaf(rng, 3)
    y = x.exp()
    y.retain_grad()
    y.sum().backward()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(y.grad, np.ones(3))


# ------------------------------------------- changing in place an array saved for backward
def test_an_in_place_write_into_a_saved_leaf_is_refused_at_backward_naming_the_op(rng):
    x = leaf(rng, 3, name="x")
    loss = (x * x).sum()
    with ta.no_grad():
        x.add_(1.0)  # as an optimizer step between forward and backward would
    err = caught(loss.backward, RuntimeError)
    assert "Mul saved its input 0 'x' (shape (3,), float64)" in str(err)
    assert "modified by an inplace operation" in str(err) and "version 1" in str(err)
    assert "after backward()" in str(err) and "clone()" in str(err)
    assert x.grad is None  # refused before any gradient was handed out


@pytest.mark.parametrize(
    "write",
    [
        "x[0] = 5.0",
        "x += 1.0",
        "x.data.add_(1.0)",
        "x.data.fill_(0.0)",
        "x.detach().zero_()",
        "x[:2].mul_(2.0)",
        "x.view(3, 1)[1, 0] = 3.0",
    ],
)
def test_every_kind_of_in_place_write_through_a_tensor_is_seen(rng, write):
    """Writes through the tensor, its `.data`, a detached copy of it or a view of it all share
    its memory's version: the Exp node, which saved its output, and the Mul, which saved x,
    refuse to run backward on changed values."""
    x = leaf(rng, 3, name="x")
    y = x.exp()
    loss = (y * x).sum()
    with ta.no_grad():
        exec(compile(write, "<user code>", "exec"), {"x": x, "np": np})
    err = caught(loss.backward, RuntimeError)
    assert "modified by an inplace operation" in str(err)
    assert "saved its input 1 'x'" in str(err) or "saved its output" in str(err)


def test_an_in_place_write_into_a_saved_output_names_its_output(rng):
    x = leaf(rng, 3)
    y = x.exp()  # Exp saves its output for dx = dout * y
    with ta.no_grad():
        y.mul_(2.0)
    err = caught(lambda: y.sum().backward(), RuntimeError)
    assert "Exp saved its output (shape (3,), float64)" in str(err)


def test_a_write_into_what_no_node_saved_changes_no_gradient(rng):
    """Add saves nothing: writing into its inputs afterwards is fine, as in PyTorch."""
    x, w = leaf(rng, 3), leaf(rng, 3)
    loss = ((x + w) * 2.0).sum()
    with ta.no_grad():
        x.add_(1.0)
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 2.0))


def test_a_write_into_the_weight_whose_transpose_matmul_saved_is_refused(rng):
    w = leaf(rng, 3, 3, name="w")
    x = Tensor(rng.standard_normal((2, 3)))
    out = x @ w.T  # MatMul saves x for dw, a view of w's memory for dx (not needed here)
    with ta.no_grad():
        w[0, 0] = 100.0
    out.sum().backward()  # only x was needed: MatMul reads the saved x, not w
    np.testing.assert_allclose(w.grad, np.broadcast_to(x.numpy().sum(axis=0), (3, 3)))
    x2 = leaf(rng, 2, 3)
    out = x2 @ w.T  # now dx needs w's values
    with ta.no_grad():
        w[0, 0] = 1.0
    err = caught(lambda: out.sum().backward(), RuntimeError)
    assert "MatMul saved" in str(err) and "modified by an inplace operation" in str(err)


def test_a_write_straight_into_the_ndarray_is_caught_in_anomaly_mode(rng):
    """`t.numpy()[0] = v` goes around every tensor (PyTorch's `t.detach().numpy()` too): no
    version counter sees it, but anomaly mode's checksums do, naming the op."""
    x = leaf(rng, 3, name="x")
    with ta.detect_anomaly():
        loss = (x * x).sum()
        x.numpy()[0] = 5.0
        err = caught(loss.backward, ta.AnomalyError)
    assert "Mul: saved array" in str(err) and "straight into the NumPy array" in str(err)


def test_a_reshaped_leaf_used_twice_releases_cleanly(rng):
    x = leaf(rng, 2, 3)
    w = leaf(rng, 6)
    loss = (x.reshape(6) * w).sum() + (x * 3.0).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad, w.numpy().reshape(2, 3) + 3.0)
    assert x.numpy().flags.writeable


# ---------------------------------------------------------------- shapes and axes
def test_softmax_over_an_axis_that_does_not_exist():
    x = Tensor(np.ones((2, 3)))
    err = caught(lambda: x.softmax(axis=2), ValueError)
    assert str(err) == (
        "Softmax: axis 2 does not exist for a tensor of shape (2, 3) "
        "(2 axes: use an axis from -2 to 1)"
    )
    assert "LogSoftmax: axis -3 does not exist" in str(caught(lambda: x.log_softmax(-3)))
    assert "axis must be an int, got float" in str(caught(lambda: x.softmax(1.0), TypeError))


def test_matmul_shape_mismatch_names_shapes_and_the_likely_fix():
    a, b = Tensor(np.ones((2, 3))), Tensor(np.ones((2, 3)))
    err = caught(lambda: a @ b, ValueError)
    assert "MatMul: cannot multiply shapes (2, 3) @ (2, 3)" in str(err)
    assert "left operand (3) must equal the second-to-last axis of the right (2)" in str(err)
    assert ".T or .swapaxes(-1, -2)" in str(err)
    batch = caught(lambda: Tensor(np.ones((2, 2, 3))) @ Tensor(np.ones((3, 3, 4))), ValueError)
    assert "batch axes of (2, 2, 3) @ (3, 3, 4)" in str(batch)
    scalar = caught(lambda: Tensor(np.ones(3)) @ Tensor(2.0), ValueError)
    assert "use * to multiply by a scalar" in str(scalar)


@pytest.mark.parametrize("op, fn", [("Mul", lambda a, b: a * b), ("Sub", lambda a, b: a - b)])
def test_broadcast_mismatch_names_the_op_and_both_shapes(op, fn):
    a, b = Tensor(np.ones((2, 3))), Tensor(np.ones((3, 2)))
    err = caught(lambda: fn(a, b), ValueError)
    assert str(err).startswith(f"{op}: shapes (2, 3) and (3, 2) do not broadcast")
    assert "reshape or unsqueeze" in str(err)


def test_a_custom_backward_returning_the_wrong_shape_names_op_and_shapes():
    class Bad(ta.Function):
        """out = a;  da = dout (but this one returns the wrong shape)"""

        @staticmethod
        def forward(ctx, a):
            return a.copy()

        @staticmethod
        def backward(ctx, grad_out):
            return (np.ones(5),)

    x = Tensor(np.ones((2, 3)), requires_grad=True)
    err = caught(lambda: Bad.apply(x).sum().backward(), RuntimeError)
    assert "Bad.backward returned a gradient of shape (5,) for input 0" in str(err)
    assert "whose shape is (2, 3)" in str(err)


# ------------------------------------------------------------------------ dtypes
@pytest.mark.parametrize(
    "make, where, dtype",
    [
        (lambda: Tensor([1, 2], requires_grad=True), "Tensor(requires_grad=True)", "int64"),
        (lambda: Tensor([True], requires_grad=True), "Tensor(requires_grad=True)", "bool"),
        (lambda: ta.from_numpy(np.arange(3), requires_grad=True), "from_numpy", "int64"),
        (lambda: ta.arange(3).requires_grad_(), "requires_grad_()", "int64"),
        (lambda: ta.zeros(3, dtype=np.int32, requires_grad=True), "from_numpy", "int32"),
    ],
)
def test_integer_tensors_cannot_require_grad(make, where, dtype):
    err = caught(make, TypeError)
    assert str(err).startswith(where)
    assert f"only float tensors can require grad, but this one has dtype {dtype}" in str(err)
    assert "dtype=np.float32" in str(err)


@pytest.mark.parametrize(
    "data, named",
    [
        ("abc", "str data"),
        (None, "NoneType data"),
        ({"a": 1}, "dict data"),
        ([1, "a"], "list data"),
    ],
)
def test_non_numeric_data_names_what_was_given(data, named):
    err = caught(lambda: Tensor(data), TypeError)
    assert named in str(err) and "is not numeric" in str(err)
    assert "np.asarray(data, dtype=np.float32)" in str(err)


def test_ragged_lists_are_explained():
    err = caught(lambda: Tensor([[1.0], [2.0, 3.0]]), TypeError)
    assert "cannot make an array from list data" in str(err)
    assert "rectangular" in str(err)


# ------------------------------------------------------------------ backward misuse
def test_backward_of_a_non_scalar_without_gradient(rng):
    x = leaf(rng, 2, 3)
    err = caught(lambda: (x * 2).backward(), RuntimeError)
    assert "one-element output, but this output (made by Mul) has shape (2, 3)" in str(err)
    assert "out.sum().backward()" in str(err) and "gradient=<array of shape (2, 3)>" in str(err)


def test_backward_with_a_gradient_of_the_wrong_shape(rng):
    x = leaf(rng, 2, 3)
    err = caught(lambda: (x * 2).backward(np.ones(3)), RuntimeError)
    assert "the gradient has shape (3,) but the output has shape (2, 3)" in str(err)
    assert "(made by Mul)" in str(err)


def test_backward_of_a_tensor_that_does_not_require_grad(rng):
    x = Tensor(rng.standard_normal(3))
    err = caught(lambda: x.sum().backward(), RuntimeError)
    assert "does not require grad" in str(err) and "requires_grad=True" in str(err)
    w = leaf(rng, 3)
    with ta.no_grad():
        y = (w * 2).sum()
    assert "no_grad()" in str(caught(y.backward, RuntimeError))


def test_item_of_many_elements():
    err = caught(lambda: Tensor(np.ones((2, 3))).item(), ValueError)
    assert "shape (2, 3) (6 elements)" in str(err) and "t[i].item()" in str(err)


# ------------------------------------------------- nothing corrupts a later computation
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_after_every_trap_a_fresh_computation_is_exact(rng):
    observed = (
        list(state.observers.on_forward),
        list(state.observers.before_backward),
        list(state.observers.on_backward),
        state.observers.record_sites,
    )
    x = leaf(rng, 2, 3, name="x")
    traps = [
        lambda: x.softmax(axis=5),
        lambda: x @ x,
        lambda: x * Tensor(np.ones(4)),
        lambda: (x * 2).backward(),
        lambda: (x * 2).backward(np.ones(7)),
        lambda: Tensor([1, 2], requires_grad=True),
        lambda: Tensor("text"),
        lambda: (x * x).item(),
    ]
    for trap in traps:
        with pytest.raises((ValueError, TypeError, RuntimeError)):
            trap()
    y = (x * x).sum()
    with ta.no_grad():
        x[0, 0] = 9.0
    with pytest.raises(RuntimeError):
        y.backward()  # modified by an in-place operation
    x.grad = None
    del y
    gc.collect()
    assert x.numpy().flags.writeable

    (x.softmax(axis=-1) * x).sum().backward()
    s = np.exp(x.numpy()) / np.exp(x.numpy()).sum(axis=-1, keepdims=True)
    expected = s + s * (x.numpy() - (s * x.numpy()).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(x.grad, expected, rtol=1e-12)
    after = (
        list(state.observers.on_forward),
        list(state.observers.before_backward),
        list(state.observers.on_backward),
        state.observers.record_sites,
    )
    assert after == observed
