"""gradcheck as a product: messages that locate errors, hints that name the classic backward
bugs (planted in tests/planted_bugs.py), float32 handling. check_gradients' own contract is in
tests/test_testing_checks.py, the `gradcheck` command line in tests/test_testing_cli.py."""

import numpy as np
import pytest
from planted_bugs import (
    PLANTED,
    PLANTED_IDS,
    Cube,
    CubeDetachedSlope,
    Square,
    SquareMissingTwo,
)

import tinygrad_attn as ta
from tinygrad_attn import Function, GradcheckError, Tensor
from tinygrad_attn.autograd.gradcheck import compare_jacobians, gradgradcheck
from tinygrad_attn.testing import check_gradients


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape, name=None):
    return Tensor(rng.standard_normal(shape), requires_grad=True, dtype=np.float64, name=name)


# The planted bugs and their fixes: tests/planted_bugs.py.


@pytest.mark.parametrize("correct, buggy, inputs, words", PLANTED, ids=PLANTED_IDS)
def test_the_correct_op_passes(correct, buggy, inputs, words):
    assert check_gradients(correct, *inputs)


@pytest.mark.parametrize("correct, buggy, inputs, words", PLANTED, ids=PLANTED_IDS)
def test_each_planted_bug_is_caught_with_a_hint_naming_it(correct, buggy, inputs, words):
    with pytest.raises(GradcheckError) as caught:
        check_gradients(buggy, *inputs)
    message = str(caught.value)
    assert buggy.__name__ in message  # the op that produced the output
    assert "hint:" in message
    hints = [m.hint for m in caught.value.mismatches]
    for word in words:
        assert any(h and word in h for h in hints), (word, hints)


def test_no_hint_is_invented_for_an_error_without_a_pattern(rng):
    class Noisy(Square):
        @staticmethod
        def backward(ctx, grad_out):
            (a,) = ctx.saved_tensors
            return (2 * a * grad_out + np.sin(7 * a) * grad_out,)

    with pytest.raises(GradcheckError) as caught:
        ta.gradcheck(Noisy.apply, [leaf(rng, 3)])
    assert caught.value.mismatches[0].hint is None
    assert "hint:" not in str(caught.value)


def test_a_kink_is_reported_as_a_kink_not_a_bug():
    x = Tensor([0.0, 1.5, -0.7], dtype=np.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as caught:
        ta.gradcheck(lambda t: t.relu(), [x])
    assert "kink" in str(caught.value)
    assert "in[0]" in str(caught.value)


# ---------------------------------------------------------------- the message locates the error


class OffAtOneElement(Function):
    """out = a * w, with a backward for w that is wrong (3 times too large) at w[1, 2] only."""

    @staticmethod
    def forward(ctx, a, w):
        ctx.save_for_backward(a, w)
        return a * w

    @staticmethod
    def backward(ctx, grad_out):
        a, w = ctx.saved_tensors
        grad_w = grad_out * a
        grad_w[1, 2] *= 3.0
        return grad_out * w, grad_w


def test_message_names_op_input_element_and_tolerances(rng):
    a, w = leaf(rng, 2, 3, name="a"), leaf(rng, 2, 3, name="w")
    with pytest.raises(GradcheckError) as caught:
        ta.gradcheck(OffAtOneElement.apply, [a, w], atol=1e-6, rtol=1e-4)
    message = str(caught.value)
    assert isinstance(caught.value, AssertionError)
    assert "OffAtOneElement" in message
    assert "input 1 ('w')" in message
    assert "input 0" not in message  # the right gradient is not blamed
    assert "shape (2, 3)" in message
    # The one wrong Jacobian entry is d out[1, 2] / d w[1, 2].
    assert "out[1, 2], in[1, 2]" in message
    assert "atol=1e-06" in message and "rtol=0.0001" in message
    assert "the full 6 x 6 Jacobian" in message
    assert "out[1,2]" in message and "in[1,2]" in message  # the block's labels
    mismatch = caught.value.mismatches[0]
    assert mismatch.input_index == 1 and mismatch.input_name == "w"
    rows, cols = np.nonzero(mismatch.failed)
    assert rows.tolist() == [5] and cols.tolist() == [5]


def test_large_jacobians_show_the_block_with_the_largest_errors(rng):
    x = leaf(rng, 5, 6)
    with pytest.raises(GradcheckError) as caught:
        ta.gradcheck(SquareMissingTwo.apply, [x])
    message = str(caught.value)
    assert "largest errors of the 30 x 30 Jacobian" in message
    block_rows = [line for line in message.splitlines() if line.startswith("      out[")]
    assert len(block_rows) == 12  # 6 rows of analytic, 6 of numeric


def test_second_output_is_named(rng):
    def two_outputs(x):
        return x.exp(), SquareMissingTwo.apply(x)

    with pytest.raises(GradcheckError, match="output 1 of SquareMissingTwo"):
        ta.gradcheck(two_outputs, [leaf(rng, 3)])


# -------------------------------------------------------------------- gradcheck's contract


def test_raise_exception_false_returns_false_and_true(rng):
    assert ta.gradcheck(SquareMissingTwo.apply, [leaf(rng, 3)], raise_exception=False) is False
    assert ta.gradcheck(Square.apply, [leaf(rng, 3)], raise_exception=False) is True
    assert check_gradients(SquareMissingTwo, (3,), raise_exception=False) is False


def test_float32_inputs_warn_and_are_checked_in_float64(rng):
    x = Tensor(rng.standard_normal((3, 4)), dtype=np.float32, requires_grad=True)
    original = x.numpy().copy()
    with pytest.warns(UserWarning, match="float64"):
        # Central differences with eps=1e-6 in float32 would be noise; passing these
        # tolerances shows the check ran on a float64 copy.
        assert ta.gradcheck(lambda t: (t * t).tanh(), [x], atol=1e-7, rtol=1e-6)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x.numpy(), original)
    with pytest.warns(UserWarning, match="float64"):
        assert check_gradients(Square, x.numpy())


def test_measurements_are_returned_without_raising(rng):
    good = compare_jacobians(Square.apply, [leaf(rng, 4)])
    assert good.passed and good.mismatches == [] and good.report == ""
    assert 0 <= good.max_abs_error < 1e-7
    bad = compare_jacobians(SquareMissingTwo.apply, [leaf(rng, 4)])
    assert not bad.passed
    assert bad.max_rel_error == pytest.approx(0.5, rel=1e-6)
    assert "constant factor" in bad.report


def test_no_input_requiring_grad_is_an_error():
    with pytest.raises(ValueError, match="requires_grad=True"):
        ta.gradcheck(lambda t: t.exp(), [Tensor(np.ones(2))])


def test_a_numpy_backward_under_create_graph_says_how_to_become_twice_differentiable(rng):
    with pytest.raises(RuntimeError) as caught:
        gradgradcheck(Square.apply, [leaf(rng, 3)])
    message = str(caught.value)
    assert "Square.backward works on NumPy arrays" in message
    assert "tensor_backward = True" in message and "torch.autograd.Function" in message
    with pytest.raises(RuntimeError, match="Square.backward works on NumPy"):
        Square.apply(leaf(rng, 3)).sum().backward(create_graph=True)
    x = leaf(rng, 3)
    Square.apply(x).sum().backward()  # the first order is unaffected
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())


def test_a_bug_only_the_second_order_catches(rng):
    """CubeDetachedSlope's gradient has the right values (gradcheck passes) but a graph that
    forgets the slope depends on a: only gradgradcheck sees it, naming the op."""
    assert ta.gradcheck(CubeDetachedSlope.apply, [leaf(rng, 3)])
    assert ta.autograd.gradgradcheck(Cube.apply, [leaf(rng, 3)])
    with pytest.raises(GradcheckError) as caught:
        ta.autograd.gradgradcheck(CubeDetachedSlope.apply, [leaf(rng, 3)])
    assert "gradgradcheck of CubeDetachedSlope" in str(caught.value)
    assert "input 0" in str(caught.value)
