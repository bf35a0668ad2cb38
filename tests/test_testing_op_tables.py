"""The op tables themselves (tinygrad_attn/testing/op_tables/, testing/opspec.py): every
primitive op has a row, reductions and binary ops cover their forms, the random generators
give valid cases, lookups, registration, and the value domains."""

import importlib
import inspect
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.ops
from tinygrad_attn.testing import op_tables

# Every module of tinygrad_attn/ops/, found on disk: a new ops file is covered without a list.
OP_MODULES = tuple(
    importlib.import_module(f"tinygrad_attn.ops.{info.name}")
    for info in pkgutil.iter_modules(tinygrad_attn.ops.__path__)
    if not info.name.startswith("_")
)


def _op_classes() -> set:
    return {
        cls.__name__
        for module in OP_MODULES
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if issubclass(cls, ta.Function) and cls.__module__ == module.__name__
    }


def _graph_ops(out: ta.Tensor) -> set:
    """The class names of every node in the graph that made `out`, walked through `parents`."""
    names, seen, stack = set(), set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and id(node) not in seen:
            seen.add(id(node))
            names.add(type(node).__name__)
            stack.extend(p for p in node.parents if isinstance(p, ta.Function))
    return names


def test_every_primitive_op_appears_in_the_table():
    ran = set()
    for sample in op_tables.all_samples(np.random.default_rng(0)):
        ran |= _graph_ops(sample.call(*sample.inputs()))
    assert {"Add", "MatMul", "Softmax", "ScaledDotProductAttention"} <= ran
    missing = _op_classes() - ran
    assert not missing, f"ops with no row in the op table: {sorted(missing)}"


def test_every_primitive_op_has_rows_of_its_own_named_after_its_class():
    # A composite's row exercises the ops inside it, but only with the composite's shapes:
    # each primitive gets hand-picked cases of its own (a row named after the class).
    assert {"Add", "Softmax"} <= _op_classes()
    rng = np.random.default_rng(0)
    for name in sorted(_op_classes()):
        assert name in op_tables.names(), f"{name} has no op-table row of its own"
        for sample in op_tables.get(name).samples(rng):
            out = sample.call(*sample.inputs())
            assert type(out.grad_fn).__name__ == name, f"{sample.id} does not run {name}"


def test_every_reduction_is_checked_on_every_axis_form_with_and_without_keepdims():
    for name in ("Sum", "Mean", "Max", "Var"):
        forms = {(str(c.params["axis"]), c.params["keepdims"]) for c in op_tables.get(name).cases}
        for axis in (None, 0, 1, 2, -1, (0, 2)):
            for keepdims in (False, True):
                assert (str(axis), keepdims) in forms, (name, axis, keepdims)


def test_every_binary_op_broadcasts_on_both_sides():
    for name in ("Add", "Sub", "Mul", "Div", "Pow"):
        shapes = [tuple(v.shape for v in c.inputs) for c in op_tables.get(name).cases]
        assert any(len(a) > len(b) for a, b in shapes), name
        assert any(len(a) < len(b) for a, b in shapes), name
        assert any(1 in a and 1 in b for a, b in shapes), name


@pytest.mark.parametrize("spec", op_tables.specs(), ids=op_tables.names())
def test_random_samples_from_the_registry_sampler(spec):
    rng = np.random.default_rng(7)
    for _ in range(4):
        sample = spec.sample(rng)
        out = sample.call(*sample.inputs())
        np.testing.assert_allclose(out.numpy(), sample.reference(), rtol=1e-9, atol=1e-12)
        assert ta.gradcheck(sample.call, sample.inputs(), **spec.gradcheck_options)


def test_registry_lookup_is_case_insensitive_and_takes_globs():
    assert op_tables.get("matmul").name == "MatMul"
    assert [s.name for s in op_tables.select(["softmax"])] == ["Softmax"]
    assert {s.name for s in op_tables.select(["F.*softmax"])} == {"F.softmax", "F.log_softmax"}
    assert len(op_tables.select([])) == len(op_tables.names())
    with pytest.raises(KeyError, match="NoSuchOp"):
        op_tables.select(["Add", "NoSuchOp"])
    with pytest.raises(KeyError, match="registered ops"):
        op_tables.get("NoSuchOp")


def test_registering_a_name_twice_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        op_tables.register(op_tables.get("Add"))


def test_distinct_domain_has_no_ties_and_kink_domains_avoid_zero():
    rng = np.random.default_rng(0)
    values = op_tables.draw_values(rng, (4, 4, 4), op_tables.DISTINCT)
    assert np.unique(values).size == values.size
    gaps = np.diff(np.sort(values.ravel()))
    assert gaps.min() > 1e-3
    for domain in (op_tables.AWAY_FROM_ZERO, op_tables.NEAR_ZERO, op_tables.NONZERO):
        drawn = op_tables.draw_values(rng, (1000,), domain)
        assert np.abs(drawn).min() >= domain.low
        assert (drawn < 0).any() and (drawn > 0).any()


def test_no_file_of_the_testing_package_is_over_650_lines():
    folder = Path(op_tables.__file__).parent.parent
    lengths = {
        p.relative_to(folder).as_posix(): len(p.read_text().splitlines())
        for p in folder.rglob("*.py")
    }
    assert "opspec.py" in lengths and "op_tables/elementwise.py" in lengths
    assert not {name: n for name, n in lengths.items() if n > 650}, "split the family file"
