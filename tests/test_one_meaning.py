"""One meaning per name: every public name that NumPy and PyTorch share means PyTorch's here.

The cases (tests/one_meaning_cases.py) call each such name the PyTorch way; what PyTorch 2.13
gave for them is recorded in tests/data/one_meaning_reference.json (written by
tests/make_one_meaning_reference.py), so this module needs no PyTorch. The walker makes sure
no shared name goes unchecked: a name this package exports (on the module or on Tensor) that
NumPy and PyTorch also have needs a case.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from one_meaning_cases import CASES, NAMES, NOT_VALUES, mismatch, outcome

import tinygrad_attn as ta

REFERENCE = json.loads(
    (Path(__file__).resolve().parent / "data" / "one_meaning_reference.json").read_text()
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_case_gives_what_pytorch_gives(case):
    got = outcome(case, ta, np)
    why = mismatch(got, REFERENCE["cases"][case])
    assert why is None, f"{case}: {CASES[case]}\n  {why}"


def _shared_names() -> set:
    """Public names of this package (module and Tensor) that NumPy and PyTorch both have."""
    public = {
        n for n in dir(ta) if not n.startswith("_") and not isinstance(getattr(ta, n), ModuleType)
    }  # (submodules, such as ta.testing once imported, are not names with a meaning)
    module = public & set(dir(np)) & set(REFERENCE["module_names"])
    methods = {n for n in dir(ta.Tensor) if not n.startswith("_") or n.endswith("__")}
    shared = methods & set(dir(np.ndarray)) & set(REFERENCE["tensor_names"])
    return (module | {n if n.startswith("__") else "." + n for n in shared}) - NOT_VALUES


def test_every_name_numpy_and_pytorch_share_has_a_case():
    unchecked = sorted(_shared_names() - set(NAMES))
    assert not unchecked, f"shared names with no case in tests/one_meaning_cases.py: {unchecked}"
    for name, cases in NAMES.items():
        assert cases and set(cases) <= set(CASES), f"{name}: unknown cases {cases}"


def test_the_reference_is_pytorchs_and_complete():
    assert REFERENCE["torch"].startswith("2.13")
    assert set(REFERENCE["cases"]) == set(CASES), "run tests/make_one_meaning_reference.py"
