"""The benchmarks time what they claim: each variant of benchmarks/attention.py computes the same
gradients as the hand-written floor (the script checks this too before timing; here it runs
without the timing, in float64)."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def attention():
    spec = importlib.util.spec_from_file_location(
        "bench_attention", ROOT / "benchmarks" / "attention.py"
    )
    module = importlib.util.module_from_spec(spec)
    argv, sys.argv = sys.argv, ["attention.py", "--checkout", str(ROOT)]
    try:
        spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    return module


@pytest.mark.parametrize("shape", [(1, 8, 16), (2, 5, 4)])
def test_every_attention_variant_gives_the_floors_gradients(attention, shape):
    x, weights = attention.make_inputs(shape, np.dtype(np.float64))
    expected = attention.floor_step(x, weights)
    variants = {
        "fused": attention.framework_step(x, weights, True),
        "composed": attention.framework_step(x, weights, False),
        "ops only": attention.ops_step(x, weights),
    }
    for name, got in variants.items():
        assert len(got) == 4, name
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12, err_msg=name)


def test_ab_compares_two_checkouts_in_one_process():
    """benchmarks/ab.py runs (here a checkout against itself, one round; in a subprocess, since
    it swaps the package in sys.modules) and prints a line per side."""
    import subprocess

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ab.py"), str(ROOT), str(ROOT), "--rounds", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.strip().startswith("before") and "sdpa/floor" in line for line in lines)
    assert any(line.strip().startswith("after") and "composed/floor" in line for line in lines)
