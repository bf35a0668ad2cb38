"""Two checkouts in ONE process, interleaved round by round: the per-node rows of issue 12's
table (attention at (1, 8, 16), fused and composed, against the NumPy floor; the 100-op chain
against PyTorch eager), for a before/after comparison steadier than two runs of `run.py`.

On a shared VM one run's ratios move by 10 % and more from phase to phase; here both checkouts,
the floor and PyTorch see the same phases, and the minimum over the rounds (the least disturbed
round) is printed next to the median.

    python benchmarks/ab.py BEFORE_DIR AFTER_DIR      # e.g. a worktree of main, and .
    python benchmarks/ab.py BEFORE AFTER --rounds 61

Each checkout's package is imported under its own name (its modules are removed from
`sys.modules` before the next one is loaded), by `attention.py` of this directory.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent


def load(checkout: Path, name: str):
    """benchmarks/attention.py of this directory, importing `checkout`'s tinygrad_attn."""
    for module in [
        m for m in sys.modules if m == "tinygrad_attn" or m.startswith("tinygrad_attn.")
    ]:
        del sys.modules[module]
    argv, sys.argv = sys.argv, ["attention.py", "--checkout", str(checkout)]
    try:
        spec = importlib.util.spec_from_file_location(name, HERE / "attention.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    if not module.ta.__file__.startswith(str(checkout)):
        raise SystemExit(f"ab.py: {checkout} did not provide tinygrad_attn ({module.ta.__file__})")
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=41)
    args = parser.parse_args(argv)
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    sides = {"before": load(args.before.resolve(), "ab_before")}
    sides["after"] = load(args.after.resolve(), "ab_after")
    x, weights = sides["before"].make_inputs((1, 8, 16), np.dtype(np.float32))
    variants = {"floor": (lambda: sides["before"].floor_step(x, weights), 100)}
    if torch is not None:
        variants["torch chain"] = (sides["before"].chain_step(torch), 20)
    for side, bench in sides.items():
        variants[f"{side} sdpa"] = (lambda b=bench: b.framework_step(x, weights, True), 100)
        variants[f"{side} composed"] = (lambda b=bench: b.framework_step(x, weights, False), 100)
        variants[f"{side} chain"] = (bench.chain_step(bench.ta), 20)
    for fn, repeat in variants.values():  # warm up
        for _ in range(repeat):
            fn()
    samples: dict = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, (fn, repeat) in variants.items():
            start = time.thread_time()
            for _ in range(repeat):
                fn()
            samples[name].append((time.thread_time() - start) / repeat)
    med = {name: statistics.median(s) for name, s in samples.items()}
    low = {name: min(s) for name, s in samples.items()}
    print(f"{args.rounds} interleaved rounds, one process; ratio of medians (of minimums)")
    for side in sides:
        parts = [
            f"sdpa/floor {med[side + ' sdpa'] / med['floor']:.2f} "
            f"({low[side + ' sdpa'] / low['floor']:.2f})",
            f"composed/floor {med[side + ' composed'] / med['floor']:.2f} "
            f"({low[side + ' composed'] / low['floor']:.2f})",
        ]
        if torch is not None:
            parts.append(
                f"chain/PyTorch {med[side + ' chain'] / med['torch chain']:.3f} "
                f"({low[side + ' chain'] / low['torch chain']:.3f})"
            )
        parts.append(f"chain {low[side + ' chain'] / 101 * 1e6:.2f} us/op")
        print(f"  {side:6} ({getattr(args, side)}): " + "; ".join(parts))
    print(f"  floor {low['floor'] * 1e6:.1f} us (min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
