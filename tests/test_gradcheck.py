"""gradcheck and check_gradients as a product: messages that locate errors, hints that name
the classic backward bugs, float32 handling, and the `gradcheck` command line."""

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Function, GradcheckError, Tensor, op_registry
from tinygrad_attn.gradcheck import compare_jacobians, gradgradcheck, main
from tinygrad_attn.testing import check_gradients


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def leaf(rng, *shape, name=None):
    return Tensor(rng.standard_normal(shape), requires_grad=True, dtype=np.float64, name=name)


# ---------------------------------------------------------------- planted bugs and their fixes


class Square(Function):
    """out = a * a;  da = 2 a dout"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (2 * a * grad_out,)


class SquareMissingTwo(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (a * grad_out,)  # the planted bug: the 2 of d(a**2) is missing


class SquareSignFlipped(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (-2 * a * grad_out,)


class MatrixProduct(Function):
    """out = a @ b;  da = dout @ b^T,  db = a^T @ dout"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out @ b.T, a.T @ grad_out


class MatrixProductTransposed(MatrixProduct):
    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return b @ grad_out.T, a.T @ grad_out  # the planted bug: (dout @ b^T)^T


class BiasAdd(Function):
    """out = x + bias (bias broadcast over rows);  dx = dout,  dbias = sum of dout over rows"""

    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out.sum(axis=0)


class BiasAddFirstRowOnly(BiasAdd):
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out[0]  # the planted bug: one broadcast copy instead of the sum


class BiasAddAveraged(BiasAdd):
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out.mean(axis=0)  # the planted bug: mean instead of sum


class Gather(Function):
    """out = x[index];  dx = dout added at index (repeats accumulate)"""

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.index = x.shape, index
        return x[index]

    @staticmethod
    def backward(ctx, grad_out):
        grad_x = np.zeros(ctx.shape)
        np.add.at(grad_x, ctx.index, grad_out)
        return grad_x, None


class GatherOverwrites(Gather):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x = np.zeros(ctx.shape)
        grad_x[ctx.index] += grad_out  # the planted bug: a repeated index keeps one value
        return grad_x, None


class Sine(Function):
    """out = sin(a);  da = cos(a) dout"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (np.cos(a) * grad_out,)


class SineForgotten(Sine):
    @staticmethod
    def backward(ctx, grad_out):
        return (None,)  # the planted bug: no gradient at all


REPEATED = np.array([0, 2, 0, 0])

PLANTED = [
    # (correct op, buggy op, inputs, words the hint must contain)
    (Square, SquareMissingTwo, [(3, 4)], ["constant factor", "0.5 times"]),
    (Square, SquareSignFlipped, [(2, 3)], ["sign flipped"]),
    (MatrixProduct, MatrixProductTransposed, [(3, 3), (3, 3)], ["transposed"]),
    (BiasAdd, BiasAddFirstRowOnly, [(3, 4), (4,)], ["missing broadcast sum"]),
    (BiasAdd, BiasAddAveraged, [(3, 4), (4,)], ["constant factor", "averaged", "1/3"]),
    (Gather, GatherOverwrites, [(3, 2), REPEATED], ["missing accumulation", "np.add.at"]),
    (Sine, SineForgotten, [(2, 2)], ["zero gradient"]),
]
PLANTED_IDS = [bug.__name__ for _, bug, _, _ in PLANTED]


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
    original = x.data.copy()
    with pytest.warns(UserWarning, match="float64"):
        # Central differences with eps=1e-6 in float32 would be noise; passing these
        # tolerances shows the check ran on a float64 copy.
        assert ta.gradcheck(lambda t: (t * t).tanh(), [x], atol=1e-7, rtol=1e-6)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x.data, original)
    with pytest.warns(UserWarning, match="float64"):
        assert check_gradients(Square, x.data)


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


def test_second_order_gradients_are_refused_with_the_reason(rng):
    with pytest.raises(NotImplementedError, match="second-order") as caught:
        gradgradcheck(Square.apply, [leaf(rng, 3)])
    assert "gradcheck" in str(caught.value)
    with pytest.raises(TypeError):
        Square.apply(leaf(rng, 3)).sum().backward(create_graph=True)


# ------------------------------------------------------------------------- check_gradients


def test_check_gradients_takes_shapes_arrays_constants_and_params(rng):
    def weighted_pick(x, w, index, axis):
        return (x[index] * w).sum(axis=axis)

    assert check_gradients(
        weighted_pick, (4, 3), rng.standard_normal(3), np.array([0, 3, 3]), params={"axis": 1}
    )
    assert check_gradients(Gather, [[1.0, 2.0], [3.0, 4.0]], np.array([1, 0, 1]), trials=3)


def test_check_gradients_sampling_is_seeded_and_bounded():
    seen = []

    def spy(x):
        seen.append(x.data.copy())
        return x.log()

    check_gradients(spy, (3,), seed=11, low=0.5, high=2.0)
    check_gradients(spy, (3,), seed=11, low=0.5, high=2.0)
    np.testing.assert_array_equal(seen[0], seen[len(seen) // 2])
    assert seen[0].dtype == np.float64
    assert (seen[0] >= 0.5).all() and (seen[0] <= 2.0).all()


def test_check_gradients_requires_grad_selects_the_inputs(rng):
    # Only the first input is checked: the planted bug in the bias gradient goes unseen.
    assert check_gradients(BiasAddFirstRowOnly, (3, 4), (4,), requires_grad=[True, False])
    with pytest.raises(ValueError, match="one per input"):
        check_gradients(Square, (3,), requires_grad=[True, False])


def test_check_gradients_compares_the_forward_with_a_reference():
    assert check_gradients(Square, (2, 3), reference=np.square)
    with pytest.raises(GradcheckError, match=r"check_gradients\(Square, \(2, 3\), seed=0\)"):
        check_gradients(Square, (2, 3), reference=np.exp)


def test_check_gradients_message_says_how_to_reproduce():
    with pytest.raises(GradcheckError) as caught:
        check_gradients(SquareMissingTwo, (3,), seed=4, trials=2)
    assert str(caught.value).startswith("check_gradients(SquareMissingTwo, (3,), seed=4), trial")


def test_check_gradients_rejects_what_it_cannot_call():
    with pytest.raises(TypeError, match="Function subclass or a callable"):
        check_gradients(42, (3,))


# ---------------------------------------------------------------------------- command line


def test_cli_prints_a_table_and_exits_zero(capsys):
    assert main(["Add", "matmul", "F.*softmax"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split() == ["op", "cases", "max", "abs", "err", "max", "rel", "err", "result"]
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert set(rows) == {"Add", "MatMul", "F.softmax", "F.log_softmax"}
    assert rows["Add"][1] == str(len(op_registry.get("Add").cases))
    assert all(row[-1] == "ok" for row in rows.values())
    assert float(rows["MatMul"][2]) < 1e-6
    assert lines[-1].startswith("all 4 ops passed")


def test_cli_unknown_op_exits_two_and_lists_the_names(capsys):
    assert main(["Add", "Softmaxx"]) == 2
    err = capsys.readouterr().err
    assert "Softmaxx" in err
    assert "MatMul" in err and "ScaledDotProductAttention" in err


def test_cli_fails_with_the_report_when_an_op_is_wrong(capsys, monkeypatch):
    add = op_registry.get("Add")
    broken = op_registry.OpSpec(
        "BrokenSquare",
        SquareMissingTwo.apply,
        np.square,
        (op_registry.Case("(3,)", (op_registry.Values((3,)),)),),
        add.generate,
        "tests",
    )
    monkeypatch.setitem(op_registry._REGISTRY, "BrokenSquare", broken)
    assert main(["BrokenSquare", "Add"]) == 1
    out = capsys.readouterr().out
    assert "BrokenSquare" in out and "FAIL (1)" in out
    assert "1 of 2 ops FAILED" in out
    assert "BrokenSquare[(3,)]" in out and "hint: constant factor" in out


def test_cli_list(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == len(op_registry.names())
