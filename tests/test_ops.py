"""The op table: every case of every registered op (tinygrad_attn/testing/op_tables/).

One parametrized table, with readable ids (`Add[(3,4) & (4,): right broadcast]`), run three
ways: gradients against central differences in float64, the forward against the NumPy
reference, and float32 in -> float32 out and float32 gradients. New op = a new
`register(OpSpec(...))` row in its family file (see testing/opspec.py);
tests/test_testing_op_tables.py checks that every primitive op has one.
"""

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor
from tinygrad_attn.testing import op_tables

OP_TABLE = op_tables.all_samples(np.random.default_rng(20240607))
op_table = pytest.mark.parametrize("sample", OP_TABLE, ids=[s.id for s in OP_TABLE])


def _grad_leaves(inputs: list) -> list:
    return [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]


def _float32_tolerance(expected: np.ndarray) -> dict:
    scale = float(np.max(np.abs(expected), initial=1.0))
    return {"rtol": 1e-4, "atol": 1e-5 * scale}


@op_table
def test_gradient_matches_central_differences(sample):
    assert sample.differentiable, "a table row with nothing to differentiate checks nothing"
    assert ta.gradcheck(sample.call, sample.inputs(), **sample.spec.gradcheck_options)


@op_table
def test_second_derivatives_match_central_differences(sample):
    """The gradient of the gradient (backward with create_graph=True, backward_graph), against
    central differences of the gradient, where it exists (not at a kink or a tie)."""
    from tinygrad_attn.autograd.gradcheck import compare_second_order

    result = compare_second_order(sample.call, sample.inputs(), **sample.spec.gradcheck_options)
    assert result.passed, result.report


@op_table
def test_forward_matches_numpy_reference(sample):
    out = sample.call(*sample.inputs())
    expected = sample.reference()
    assert out.shape == expected.shape
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-9, atol=1e-12)


@op_table
def test_float32_forward_and_backward_stay_float32(sample):
    inputs = sample.inputs(np.float32)
    out = sample.call(*inputs)
    assert out.dtype == np.float32
    expected = sample.reference()
    np.testing.assert_allclose(out.numpy(), expected, **_float32_tolerance(expected))
    out.backward(np.ones(out.shape, dtype=np.float32))
    for leaf in _grad_leaves(inputs):
        assert leaf.grad is not None
        assert leaf.grad.dtype == np.float32
        assert leaf.grad.shape == leaf.shape


def _leaf_grads(inputs: list) -> list:
    return [None if t.grad is None else t.grad.numpy().copy() for t in _grad_leaves(inputs)]


@op_table
def test_an_in_place_write_after_forward_is_refused_or_changes_no_gradient(sample):
    """Every input written in place (under no_grad, as an optimizer does) between forward and
    backward: the backward either refuses, naming the op that saved it (versions.py), or gives
    exactly the gradient it gives without the write. An op that kept an input's array for its
    backward anywhere but `save_for_backward` would give a wrong gradient here, silently."""
    inputs = sample.inputs()
    out = sample.call(*inputs)
    out.backward(np.ones(out.shape))
    expected = _leaf_grads(inputs)

    inputs = sample.inputs()
    out = sample.call(*inputs)
    with ta.no_grad():
        for t in inputs:
            if isinstance(t, Tensor) and t.dtype.kind == "f":
                t.mul_(1.5).add_(0.25)
    try:
        out.backward(np.ones(out.shape))
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
        return
    for got, want in zip(_leaf_grads(inputs), expected):
        np.testing.assert_array_equal(got, want)


# PyTorch 2.13's values (float64) at the edges, where the activations' arithmetic (no np.where)
# could go wrong: infinities, signed zeros, a tiny positive number, NaN.
_EDGES = [-np.inf, -2.0, -0.0, 0.0, 1e-30, 0.37, 3.0, np.inf, np.nan]
_ACTIVATIONS_AT_EDGES = {
    "leaky_relu(0.3)": (
        lambda t: ta.nn.functional.leaky_relu(t, 0.3),
        [-np.inf, -0.6, -0.0, 0.0, 1e-30, 0.37, 3.0, np.inf, np.nan],
        [0.3, 0.3, 0.3, 0.3, 1.0, 1.0, 1.0, 1.0, 0.3],
    ),
    "elu(1.7)": (
        lambda t: ta.nn.functional.elu(t, 1.7),
        [-1.7, -1.4699300184977584, -0.0, 0.0, 1e-30, 0.37, 3.0, np.inf, np.nan],
        [0.0, 0.2300699815022416, 1.7, 1.7, 1.0, 1.0, 1.0, 1.0, np.nan],  # (PyTorch: 1 at NaN)
    ),
    "sigmoid": (
        lambda t: t.sigmoid(),
        [0.0, 0.11920292202211755, 0.5, 0.5, 0.5, 0.5914589784327801, 0.9525741268224334, 1.0,
         np.nan],
        [0.0, 0.1049935854035065, 0.25, 0.25, 0.25, 0.24163525526403226, 0.045176659730912, 0.0,
         np.nan],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(_ACTIVATIONS_AT_EDGES))
def test_activations_at_infinities_zeros_and_nan_give_pytorchs_values(name):
    fn, expected, expected_grad = _ACTIVATIONS_AT_EDGES[name]
    x = Tensor(np.array(_EDGES), requires_grad=True)
    out = fn(x)
    out.backward(np.ones(len(_EDGES)))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-15, atol=0)
    np.testing.assert_allclose(x.grad, expected_grad, rtol=1e-15, atol=0)
    positive = x.numpy() > 0
    if name != "sigmoid":  # where a > 0 both are the identity, exactly
        assert np.array_equal(out.numpy()[positive], x.numpy()[positive])


def test_float16_sigmoid_keeps_its_tail():
    """float16's exp overflows from 11.1 on: sigmoid computes in float32 and rounds once, so
    sigmoid(-12) is 6.1e-6, not 0."""
    x = np.array([-15.0, -12.0, 0.0, 12.0])
    out = Tensor(x.astype(np.float16)).sigmoid()
    assert out.dtype == np.float16
    # (within float16's rounding: 1e-3, or one step 6e-8 below its smallest normal number)
    np.testing.assert_allclose(out.numpy(), 1 / (1 + np.exp(-x)), rtol=1e-3, atol=6e-8)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_where_by_bits_is_numpys_where_to_the_bit(dtype):
    """`ta.where` (ops/_util.select) picks bits, not values: every element equals np.where's
    bit for bit, infinities, NaN and -0.0 included, with broadcasting and a Python number."""
    from tinygrad_attn.ops._util import select

    rng = np.random.default_rng(0)
    values = np.array([np.inf, -np.inf, np.nan, -0.0, 0.0, 1e-45, -3.5, 7.25])
    a = rng.choice(values, (3, 4, 5)).astype(dtype)
    b = rng.choice(values, (4, 1)).astype(dtype)
    condition = rng.random((1, 4, 5)) < 0.5
    for got, want in [
        (select(condition, a, b), np.where(condition, a, b)),
        (select(condition, a, 0.0), np.where(condition, a, dtype(0.0))),
        (ta.where(condition, Tensor(a), Tensor(b)).numpy(), np.where(condition, a, b)),
    ]:
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


def test_float32_erf_agrees_with_math_erf_to_a_few_units_in_the_last_place():
    """float32's erf is computed with polynomials (ops/_erf.py), not math.erf per element: it
    agrees with math.erf at the same inputs to 3 units in the last place of float32 (the
    relative 2e-7 below), across the switch between its two forms and down to the smallest
    normal numbers, and keeps erf's special values."""
    import math

    tiny = np.geomspace(np.finfo(np.float32).tiny, 1, 4000)
    x = np.concatenate([np.linspace(-8, 8, 160001), tiny, -tiny]).astype(np.float32)
    expected = np.array([math.erf(v) for v in x.astype(np.float64)])
    out = Tensor(x).erf().numpy()
    assert out.dtype == np.float32
    assert np.max(np.abs(out - expected) / np.abs(np.where(x == 0, 1, expected))) < 2e-7
    special = Tensor(np.array([0.0, -0.0, np.inf, -np.inf, np.nan], np.float32)).erf().numpy()
    assert special[0] == 0 and np.signbit(special[1]) and special[1] == 0
    assert special[2] == 1 and special[3] == -1 and np.isnan(special[4])


@op_table
def test_a_result_shares_an_inputs_memory_only_as_a_view(sample):
    """A result whose array shares an input's memory is a view of that input (`_base`), so
    in-place writes through either are seen by the other's version and recorded against the
    base; any other op's result owns its memory."""
    inputs = sample.inputs()
    out = sample.call(*inputs)
    for t in inputs:
        if out is t:  # (returned as is, as PyTorch's dropout in eval mode does)
            continue
        if isinstance(t, Tensor) and np.shares_memory(out.numpy(), t.numpy()):
            base = t._base if t._base is not None else t
            assert out._base is base, f"{sample.id}: shares memory but is not a view"


@op_table
def test_every_backward_returns_one_gradient_per_input(sample):
    """The engine trusts a built-in op's backward to return a tuple with one entry per input
    (engine.accumulate checks only a user's op): each node of every row is asked directly."""
    from tinygrad_attn.engine import graph_order

    out = sample.call(*sample.inputs())
    nodes = graph_order([out.grad_fn]) if out.grad_fn is not None else []
    for node in nodes:
        returned = node.backward(node, np.ones(node.output_shape, node.output_dtype))
        assert type(returned) is tuple, f"{node.name}.backward returned {type(returned)}"
        assert len(returned) == len(node.parents), f"{node.name}: {len(returned)} gradients"


def _package_ops() -> list:
    """Every Function subclass the package defines (the built-in ops)."""
    found, todo = [], [ta.Function]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("tinygrad_attn."):
                found.append(sub)
    return found


def test_no_builtin_forward_returns_an_input_as_is(monkeypatch):
    """`apply` copies a result that shares an input's memory unless the op is a view, but it
    looks only when the result is a view of something (`out.base`): a built-in op must return
    a new array (or a view), never the input object itself, which would share the input's
    memory unseen. Every row of the op table."""
    returned_inputs = []

    def watching(op, forward):
        def checked(ctx, *arrays, **params):
            out = forward(ctx, *arrays, **params)
            if any(out is array for array in arrays) and op is not ta.ops.CopySlices:
                returned_inputs.append(op.__name__)  # (CopySlices writes its base: by design)
            return out

        return staticmethod(checked)

    for op in _package_ops():
        if "forward" in vars(op):
            monkeypatch.setattr(op, "forward", watching(op, op.forward))
    with np.errstate(all="ignore"):  # (only identity is checked here: some float32 rows overflow)
        for sample in OP_TABLE:
            for dtype in (np.float64, np.float32):
                sample.call(*sample.inputs(dtype))
    assert not returned_inputs, sorted(set(returned_inputs))
