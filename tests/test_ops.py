"""The op table: every case of every registered op (tinygrad_attn/op_registry.py).

One parametrized table, with readable ids (`Add[(3,4) & (4,): right broadcast]`), run three
ways: gradients against central differences in float64, the forward against the NumPy
reference, and float32 in -> float32 out and float32 gradients. New op = new registry entry.
"""

import inspect

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.ops.attention
import tinygrad_attn.ops.elementwise
import tinygrad_attn.ops.matmul
import tinygrad_attn.ops.movement
import tinygrad_attn.ops.reduce
import tinygrad_attn.ops.softmax
from tinygrad_attn import Tensor, op_registry
from tinygrad_attn.state import observers

OP_TABLE = op_registry.all_samples(np.random.default_rng(20240607))
op_table = pytest.mark.parametrize("sample", OP_TABLE, ids=[s.id for s in OP_TABLE])

OP_MODULES = (
    tinygrad_attn.ops.attention,
    tinygrad_attn.ops.elementwise,
    tinygrad_attn.ops.matmul,
    tinygrad_attn.ops.movement,
    tinygrad_attn.ops.reduce,
    tinygrad_attn.ops.softmax,
)


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
def test_forward_matches_numpy_reference(sample):
    out = sample.call(*sample.inputs())
    expected = sample.reference()
    assert out.shape == expected.shape
    assert out.dtype == np.float64
    np.testing.assert_allclose(out.data, expected, rtol=1e-9, atol=1e-12)


@op_table
def test_float32_forward_and_backward_stay_float32(sample):
    inputs = sample.inputs(np.float32)
    out = sample.call(*inputs)
    assert out.dtype == np.float32
    expected = sample.reference()
    np.testing.assert_allclose(out.data, expected, **_float32_tolerance(expected))
    out.backward(np.ones(out.shape, dtype=np.float32))
    for leaf in _grad_leaves(inputs):
        assert leaf.grad is not None
        assert leaf.grad.dtype == np.float32
        assert leaf.grad.shape == leaf.shape


def _op_classes() -> set:
    return {
        cls.__name__
        for module in OP_MODULES
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, ta.Function) and cls.__module__ == module.__name__
    }


def test_every_primitive_op_appears_in_the_table():
    ran = set()

    def record(node, inputs, out):
        ran.add(type(node).__name__)

    observers.on_forward.append(record)
    try:
        for sample in OP_TABLE:
            sample.call(*sample.inputs())
    finally:
        observers.on_forward.remove(record)
    missing = _op_classes() - ran
    assert not missing, f"ops with no row in the op table: {sorted(missing)}"


def test_every_reduction_is_checked_on_every_axis_form_with_and_without_keepdims():
    for name in ("Sum", "Mean", "Max", "Var"):
        forms = {(str(c.params["axis"]), c.params["keepdims"]) for c in op_registry.get(name).cases}
        for axis in (None, 0, 1, 2, -1, (0, 2)):
            for keepdims in (False, True):
                assert (str(axis), keepdims) in forms, (name, axis, keepdims)


def test_every_binary_op_broadcasts_on_both_sides():
    for name in ("Add", "Sub", "Mul", "Div", "Pow"):
        shapes = [tuple(v.shape for v in c.inputs) for c in op_registry.get(name).cases]
        assert any(len(a) > len(b) for a, b in shapes), name
        assert any(len(a) < len(b) for a, b in shapes), name
        assert any(1 in a and 1 in b for a, b in shapes), name


@pytest.mark.parametrize("spec", op_registry.specs(), ids=op_registry.names())
def test_random_samples_from_the_registry_sampler(spec):
    rng = np.random.default_rng(7)
    for _ in range(4):
        sample = spec.sample(rng)
        out = sample.call(*sample.inputs())
        np.testing.assert_allclose(out.data, sample.reference(), rtol=1e-9, atol=1e-12)
        assert ta.gradcheck(sample.call, sample.inputs(), **spec.gradcheck_options)


def test_registry_lookup_is_case_insensitive_and_takes_globs():
    assert op_registry.get("matmul").name == "MatMul"
    assert [s.name for s in op_registry.select(["softmax"])] == ["Softmax"]
    assert {s.name for s in op_registry.select(["F.*softmax"])} == {"F.softmax", "F.log_softmax"}
    assert len(op_registry.select([])) == len(op_registry.names())
    with pytest.raises(KeyError, match="NoSuchOp"):
        op_registry.select(["Add", "NoSuchOp"])
    with pytest.raises(KeyError, match="registered ops"):
        op_registry.get("NoSuchOp")


def test_registering_a_name_twice_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        op_registry.register(op_registry.get("Add"))


def test_distinct_domain_has_no_ties_and_kink_domains_avoid_zero():
    rng = np.random.default_rng(0)
    values = op_registry.draw_values(rng, (4, 4, 4), op_registry.DISTINCT)
    assert np.unique(values).size == values.size
    gaps = np.diff(np.sort(values.ravel()))
    assert gaps.min() > 1e-3
    for domain in (op_registry.AWAY_FROM_ZERO, op_registry.NEAR_ZERO, op_registry.NONZERO):
        drawn = op_registry.draw_values(rng, (1000,), domain)
        assert np.abs(drawn).min() >= domain.low
        assert (drawn < 0).any() and (drawn > 0).any()
