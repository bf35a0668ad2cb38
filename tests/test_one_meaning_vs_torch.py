"""The one-meaning cases run against PyTorch itself (skipped without torch): the recorded
reference must still be what PyTorch gives, and this package must give it too."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from one_meaning_cases import CASES, mismatch, outcome

import tinygrad_attn as ta

torch = pytest.importorskip("torch")
REFERENCE = json.loads(
    (Path(__file__).resolve().parent / "data" / "one_meaning_reference.json").read_text()
)


@pytest.mark.parametrize("case", sorted(CASES))
def test_pytorch_and_this_package_agree(case):
    theirs = outcome(case, torch, np)
    assert mismatch(theirs, REFERENCE["cases"][case]) is None, "the recorded reference is stale"
    why = mismatch(outcome(case, ta, np), theirs)
    assert why is None, f"{case}: {CASES[case]}\n  {why}"
