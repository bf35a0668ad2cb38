"""Issue 12's performance table in one command: train steps, attention and per-op overhead.

    python benchmarks/run.py                           # this checkout (about 4 minutes)
    python benchmarks/run.py --baseline /tmp/ta-main   # and another checkout, side by side
                                                       # (--baseline repeats)
    python benchmarks/run.py --quick                   # rough numbers in about a minute
    python benchmarks/run.py --clock thread            # CPU time: steadier on a busy machine
    python benchmarks/run.py --repeat 3                # each cell: median of 3 runs [range]
    python benchmarks/run.py --also-mallopt            # + train steps keeping freed memory
    /work/torchvenv/bin/python benchmarks/run.py ...   # with the PyTorch columns

Each row is a ratio measured inside one process, with both sides interleaved round by round
(so a slow phase of a busy machine hits both): the training step of a small causal transformer
LM against PyTorch eager, both on one thread (`train_step.py`, which first checks that loss and
gradients agree); attention forward + backward against the same maths written by hand in
NumPy, and a 100-op elementwise chain against PyTorch eager (`attention.py`). Every checkout is
measured by these same scripts, in its own subprocesses, importing that checkout's package.
PyTorch is optional: without it the columns that need it say n/a.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SIZES = ("tiny", "small", "medium")
# (label, target, how to read the value from one checkout's results)
ROWS = [
    ("train step tiny (V=12 T=8 E=32 H=2 L=2 B=16) / PyTorch, 1 thread each", "<= 1.0x"),
    ("train step small (V=65 T=32 E=64 H=4 L=2 B=16) / PyTorch, 1 thread each", "<= 1.0x"),
    ("train step medium (V=65 T=64 E=128 H=4 L=4 B=32) / PyTorch, 1 thread each", "<= 1.15x"),
    ("attention fwd+bwd (1, 8, 16), fused SDPA / NumPy", "<= 2.0x"),
    ("  same, PyTorch eager / NumPy (for reference)", "-"),
    ("  same, composed attention / NumPy", "<= 3.0x"),
    ("per-op chain (100 elementwise ops on (4, 4), fwd+bwd) / PyTorch eager", "<= 0.6x"),
    ("(8, 128, 128) SDPA / NumPy", "<= 1.10x"),
    ("(4, 512, 256) SDPA / NumPy", "<= 1.05x"),
]


def run(cmd: list, cwd: Path, checkout: Path) -> str:
    """Run one benchmark script; its output is shown only if it fails. Returns the output."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    print(f"$ (cd {cwd} && {' '.join(map(str, cmd))})", file=sys.stderr, flush=True)
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, text=True)
    if done.returncode:
        sys.stdout.write(done.stdout)
        raise SystemExit(f"run.py: {cmd[1]} failed for {checkout} (exit {done.returncode})")
    return done.stdout


def train_steps(
    python: str, checkout: Path, args: argparse.Namespace, out: Path, mallopt: bool
) -> dict:
    """ta-1t / torch-1t paired ratio and ta-1t ms/step per size (None: no torch)."""
    cmd = [python, HERE / "train_step.py", "--impls", "ta-1t,torch-1t", "--json", out]
    cmd += ["--quick"] if args.quick else []
    cmd += ["--mallopt"] if mallopt else []
    cmd += ["--clock", args.clock]
    printed = run(cmd, checkout, checkout)
    for line in printed.splitlines():  # the agreement check passed before any timing
        if line.startswith("PASS") or line.startswith("torch is not installed"):
            print(f"  {line[:110]}", file=sys.stderr)
    data = json.loads(out.read_text())
    ratios = {r["size"]: r["median"] for r in data["ratios"] if r["num"] == "ta-1t"}
    ms = {r["size"]: r["median"] * 1e3 for r in data["results"] if r["impl"] == "ta-1t"}
    faults = {r["size"]: r["minor_faults_median"] for r in data["results"] if r["impl"] == "ta-1t"}
    nodes = {c["size"]: sum(c["nodes_ta"].values()) for c in data["checks"] if c["nodes_ta"]}
    return {"ratio": ratios, "ms": ms, "faults": faults, "nodes": nodes}


def attention(python: str, checkout: Path, args: argparse.Namespace, out: Path) -> dict:
    cmd = [python, HERE / "attention.py", "--float32", "--no-memory", "--json", out]
    cmd += ["--checkout", checkout, "--clock", args.clock] + (["--quick"] if args.quick else [])
    run(cmd, checkout, checkout)
    return json.loads(out.read_text())


def measure(
    python: str, checkout: Path, args: argparse.Namespace, tmp: Path, mallopt: bool
) -> list:
    """One checkout's row values (floats, or None for n/a), in ROWS' order."""
    train = train_steps(python, checkout, args, tmp / "train.json", mallopt)
    att = attention(python, checkout, args, tmp / "attention.json")
    by_shape = {tuple(r["shape"]): r for r in att["attention"]}
    small, mid, big = by_shape[(1, 8, 16)], by_shape[(8, 128, 128)], by_shape[(4, 512, 256)]
    chain = att["chain"]
    values = [train["ratio"].get(size) for size in SIZES]
    values += [
        small["sdpa"] / small["floor"],
        small["torch"] / small["floor"] if "torch" in small else None,
        small["composed"] / small["floor"],
        chain["ours"] / chain["torch"] if chain.get("torch") else None,
        mid["sdpa"] / mid["floor"],
        big["sdpa"] / big["floor"],
    ]
    notes = {
        "ms": train["ms"],
        "faults": train["faults"],
        "nodes": train["nodes"],
        "chain_us": {k: (v or 0) * 1e6 for k, v in chain.items()},
    }
    return [values, notes]


def commit(checkout: Path) -> str:
    """The checkout's short commit (with + if it has uncommitted changes), or its name."""
    try:
        sha = subprocess.run(
            ["git", "-C", checkout, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", checkout, "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        sha, dirty = "", ""
    return (sha + ("+" if dirty else "")) or checkout.name


def rows_of(runs: Any) -> list:
    """Per row, the values of several runs of one checkout (in ROWS' order)."""
    return [list(values) for values in zip(*runs)]


def cell(values: list) -> str:
    """One cell: the value, or with several runs their median and [lowest-highest]."""
    known = [v for v in values if v is not None]
    if not known:
        return "n/a"
    if len(known) == 1:
        return f"{known[0]:.2f}x"
    return f"{statistics.median(known):.2f}x [{min(known):.2f}-{max(known):.2f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline",
        type=Path,
        action="append",
        default=[],
        help="another checkout to measure first (repeatable); its column is named by its commit",
    )
    parser.add_argument(
        "--checkout", type=Path, default=HERE.parent.resolve(), help="default: this one"
    )
    parser.add_argument("--python", default=sys.executable, help="interpreter for the runs")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (rough numbers)")
    parser.add_argument(
        "--mallopt", action="store_true", help="train steps with glibc keeping freed memory"
    )
    parser.add_argument(
        "--also-mallopt",
        action="store_true",
        help="one more column: the last checkout again, its train steps with --mallopt",
    )
    parser.add_argument(
        "--clock",
        choices=["wall", "thread"],
        default="wall",
        help="wall time, or each process's main-thread CPU time (steadier on a busy machine; "
        "fair because every compared side runs on one thread)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="measure every checkout this many times, in turn; each cell is then the median "
        "with [lowest-highest] (a busy machine moves one run's ratios by 10 %% and more)",
    )
    parser.add_argument("--json", type=Path, help="also write the table's numbers here")
    args = parser.parse_args(argv)
    checkouts = [(f"before {commit(b)}", b.resolve(), args.mallopt) for b in args.baseline]
    label = f"after {commit(args.checkout)}" if checkouts else "now"
    checkouts.append((label, args.checkout, args.mallopt))
    if args.also_mallopt:
        checkouts.append((label + " mallopt", args.checkout, True))
    start = time.perf_counter()
    runs: dict = {label: [] for label, _, _ in checkouts}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):  # checkouts in turn, so a slow phase hits each of them
            for label, checkout, mallopt in checkouts:
                runs[label].append(measure(args.python, checkout, args, Path(tmp), mallopt))
    results = {label: [rows_of(r[0] for r in done), done[-1][1]] for label, done in runs.items()}
    labels = [label for label, _, _ in checkouts]
    quick = "quick, " if args.quick else ""
    repeated = f", each the median of {args.repeat} runs [range]" if args.repeat > 1 else ""
    print(f"\nissue 12's table ({quick}float32, {args.clock} clock{repeated}, {args.python})")
    for label, checkout, mallopt in checkouts:
        print(f"  {label}: {checkout}" + (" (train steps with --mallopt)" if mallopt else ""))
    print("\n| workload | target | " + " | ".join(labels) + " |")
    print("|---|---|" + "---:|" * len(labels))
    for i, (row, target) in enumerate(ROWS):
        print(f"| {row} | {target} | " + " | ".join(cell(results[k][0][i]) for k in labels) + " |")
    print()
    for label in labels:
        notes = results[label][1]
        steps = ", ".join(f"{s} {v:.2f} ms" for s, v in notes["ms"].items())
        faults = ", ".join(f"{s} {v:.0f}" for s, v in notes["faults"].items())
        nodes = ", ".join(f"{s} {v}" for s, v in notes["nodes"].items()) or "n/a"
        chain = notes["chain_us"]
        torch_us = f"{chain['torch']:.2f} us/op" if chain["torch"] else "n/a"
        print(
            f"{label}: ta-1t ms/step {steps}; page faults/step {faults}; graph nodes per step "
            f"{nodes}; chain {chain['ours']:.2f} us/op (PyTorch {torch_us}, NumPy alone "
            f"{chain['numpy']:.2f} us/op)"
        )
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"rows": ROWS, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
