"""Testing helpers: `check_gradients` for users' own ops, hypothesis strategies, the op tables.

- `check_gradients` (testing/checks.py): gradcheck a `Function` or a function of Tensors on
  sampled or given inputs, in a user's own pytest suite;
- `arrays_in`, `broadcastable_arrays`, `op_samples`, `HypothesisChoices` (testing/strategies.py):
  hypothesis strategies (hypothesis is needed only when one is asked for);
- `testing.opspec`: what an op-table entry is (Domain, Values, Case, Sample, OpSpec, register);
- `testing.op_tables`: the cases of every public op, one file per op family; imported only by
  those who ask for it (`from tinygrad_attn.testing import op_tables`), never by this file;
- `testing.cli`: `python -m tinygrad_attn gradcheck`, every op of the tables through gradcheck.

This package reads the graph; nothing in the core imports it.
"""

from .checks import check_gradients
from .strategies import HypothesisChoices, arrays_in, broadcastable_arrays, op_samples

__all__ = [
    "HypothesisChoices",
    "arrays_in",
    "broadcastable_arrays",
    "check_gradients",
    "op_samples",
]
