"""tinygrad_attn.memory.keep_freed_memory: the opt-in glibc malloc setting for training loops.

The setting changes the whole process, so its effect is checked in a subprocess, by counting
page faults (a count, not a timing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tinygrad_attn.memory import keep_freed_memory

ROOT = Path(__file__).resolve().parent.parent

LOOP = """
import resource, sys
import numpy as np
from tinygrad_attn.memory import keep_freed_memory

applied = keep_freed_memory()
def step():  # a training step's pattern: the same big arrays made and freed every time
    a = np.ones((256, 1024))  # 2 MiB each
    b = a * 2.0
    c = b + a
    return float(c[0, 0])
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20
print(applied, faults)
"""


def test_keep_freed_memory_stops_page_faults_of_a_repeated_step():
    out = subprocess.run(
        [sys.executable, "-c", LOOP],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    ).stdout.split()
    if out[0] != "True":
        pytest.skip("no glibc mallopt here")
    assert float(out[1]) < 10  # without it: about 1,500 faults per step (3 x 2 MiB)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "1"])
def test_keep_freed_memory_rejects_bad_thresholds(bad):
    with pytest.raises(ValueError, match="must be a positive int"):
        keep_freed_memory(mmap_threshold=bad)
    with pytest.raises(ValueError, match="trim_threshold must be a positive int"):
        keep_freed_memory(trim_threshold=bad)
