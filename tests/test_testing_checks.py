"""testing.check_gradients' contract (shapes, arrays, constants, params, seeds, requires_grad,
a NumPy reference, the reproducing call in the message), and the testing package's promise
that `check_gradients` comes without the op tables."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from planted_bugs import BiasAddFirstRowOnly, Gather, Square, SquareMissingTwo

from tinygrad_attn import GradcheckError
from tinygrad_attn.testing import check_gradients, op_tables


@pytest.fixture
def rng():
    return np.random.default_rng(0)


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
        seen.append(x.numpy().copy())
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


# ---------------------------------------------------------------- what importing costs


def _modules_loaded_by(statement: str) -> set:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_check_gradients_and_the_strategies_come_without_the_op_tables():
    loaded = _modules_loaded_by(
        "from tinygrad_attn.testing import check_gradients, arrays_in, op_samples"
    )
    assert "tinygrad_attn.testing.checks" in loaded
    assert not {m for m in loaded if m.startswith("tinygrad_attn.testing.op_tables")}
    assert "hypothesis" not in loaded  # imported only when a strategy is asked for


def test_importing_the_op_tables_loads_every_family_file():
    # A new family file that op_tables/__init__.py forgets to import would register nothing.
    folder = Path(op_tables.__file__).parent
    families = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    assert {"elementwise", "reduce", "movement", "matmul", "softmax"} <= families
    loaded = _modules_loaded_by("from tinygrad_attn.testing import op_tables")
    assert {f"tinygrad_attn.testing.op_tables.{name}" for name in families} <= loaded
    assert {module.__name__.rsplit(".", 1)[1] for module in op_tables.FAMILIES} == families
