"""Errors that teach: each classic autodiff trap, and the message it gets.

Each message must name the op, the shapes or dtypes involved, and what to do instead; and no
mistake may leave state behind that corrupts a later computation.
"""

import gc
import sys
import warnings

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor, debug, state


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


# ------------------------------------------------ writing into an array saved for backward
def test_write_into_a_saved_leaf_fails_at_the_write_and_the_error_names_the_op(rng):
    x = leaf(rng, 3, name="x")
    loss = (x * x).sum()
    err = caught(lambda: x.data.__setitem__(0, 5.0), ValueError)  # x.data[0] = 5.0
    assert "read-only" in str(err)
    assert ta.saved.saved_by(x.data) == ["Mul", "Mul"]
    before = x.data.copy()
    try:
        x.data[0] = 5.0
    except ValueError as exc:
        note = debug.explain_read_only(exc)
    assert "`x.data` (shape (3,), float64) was saved for backward by Mul (2 times)" in note
    assert "after backward()" in note and "x.data = x.data.copy()" in note
    loss.backward()  # the write failed, so the gradient is the true one
    np.testing.assert_array_equal(x.grad, 2 * before)


@pytest.mark.parametrize(
    "write",
    ["x.data[0] = 5.0", "x.data += 1.0", "np.add(x.data, 1.0, out=x.data)", "x.data.fill(0.0)"],
)
def test_every_kind_of_in_place_write_is_explained(rng, write):
    x = leaf(rng, 3, name="x")
    loss = x.exp().sum() * x.sum()  # Exp saves its output; Mul saves the two sums
    y = x * 3.0
    namespace = {"x": x, "np": np}
    with pytest.raises(ValueError) as info:
        exec(compile(write, "<user code>", "exec"), namespace)
    note = debug.explain_read_only(info.value)
    assert note is not None and "`x.data`" in note and "saved for backward by Mul" in note
    del loss, y


def test_writing_a_weight_whose_transpose_matmul_saved_is_refused(rng):
    w = leaf(rng, 3, 3, name="w")
    x = Tensor(rng.standard_normal((2, 3)))
    out = x @ w.T  # MatMul saves a view of w.data, not w.data itself
    with pytest.raises(ValueError, match="read-only") as info:
        w.data[0, 0] = 100.0
    assert "saved for backward by MatMul" in debug.explain_read_only(info.value)
    out.sum().backward()
    np.testing.assert_allclose(w.grad, np.broadcast_to(x.data.sum(axis=0), (3, 3)))
    w.data[0, 0] = 100.0  # released: writable again


def test_writing_an_op_result_is_explained(rng):
    x = leaf(rng, 3)
    y = x * 2.0
    with pytest.raises(ValueError) as info:
        y.data[0] = 1.0
    note = debug.explain_read_only(info.value)
    assert "`y.data`" in note and "read-only from birth" in note and "y.data.copy()" in note


def test_unrelated_value_errors_get_no_note():
    assert debug.explain_read_only(ValueError("something else")) is None
    mine = np.ones(3)
    mine.flags.writeable = False
    with pytest.raises(ValueError) as info:
        mine[0] = 2.0
    assert debug.explain_read_only(info.value) is None  # not an array a graph holds


def test_uncaught_write_error_gets_the_note_from_the_excepthook(rng, capsys):
    x = leaf(rng, 2, name="x")
    loss = (x * x).sum()
    try:
        x.data[1] = 0.0
    except ValueError:
        exc_type, exc, tb = sys.exc_info()
    assert isinstance(sys.excepthook, ta.saved._Excepthook)  # installed by the package
    sys.excepthook(exc_type, exc, tb)
    err = capsys.readouterr().err
    assert "ValueError: assignment destination is read-only" in err
    assert "`x.data` (shape (2,), float64) was saved for backward by Mul" in err
    del loss


def test_a_view_and_the_memory_it_shares_both_saved_release_cleanly():
    for order in (0, 1):  # either node may be released first
        memory = np.arange(6.0)
        part = ta.from_numpy(memory[:3], requires_grad=True)
        whole = ta.from_numpy(memory, requires_grad=True)
        a, b = (part * part).sum(), (whole * whole).sum()
        loss = a + b if order else b + a
        with pytest.raises(ValueError):
            memory[5] = 1.0  # the owner is locked too
        loss.backward()
        np.testing.assert_array_equal(part.grad, 2 * np.arange(3.0))
        np.testing.assert_array_equal(whole.grad, 2 * np.arange(6.0))
        assert memory.flags.writeable and part.data.flags.writeable
        assert ta.saved.saved_by(memory) == [] and id(memory) not in ta.saved._waiting


def test_a_reshaped_leaf_used_twice_releases_cleanly(rng):
    x = leaf(rng, 2, 3)
    w = leaf(rng, 6)
    loss = (x.reshape(6) * w).sum() + (x * 3.0).sum()
    loss.backward()
    np.testing.assert_allclose(x.grad, w.data.reshape(2, 3) + 3.0)
    assert x.data.flags.writeable


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
    with pytest.raises(ValueError):
        x.data[0, 0] = 9.0
    y.backward()
    with pytest.raises(RuntimeError):
        y.backward()
    x.grad = None
    del y
    gc.collect()
    assert ta.saved.saved_by(x.data) == []  # every lock the traps took was undone
    assert x.data.flags.writeable

    (x.softmax(axis=-1) * x).sum().backward()
    s = np.exp(x.data) / np.exp(x.data).sum(axis=-1, keepdims=True)
    expected = s + s * (x.data - (s * x.data).sum(axis=-1, keepdims=True))
    np.testing.assert_allclose(x.grad, expected, rtol=1e-12)
    after = (
        list(state.observers.on_forward),
        list(state.observers.before_backward),
        list(state.observers.on_backward),
        state.observers.record_sites,
    )
    assert after == observed
