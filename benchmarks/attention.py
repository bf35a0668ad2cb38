"""Attention step: tinygrad_attn against the same maths written by hand in NumPy (the floor).

Workload (issue 6): X (B, T, D) constant; Wq, Wk, Wv, Wo (D, D) trainable;
Q = X Wq, K = X Wk, V = X Wv, A = softmax(Q K^T / sqrt(D)), Y = (A V) Wo, loss = sum(Y^2),
backward to the four weights. Three variants run interleaved in one process, round after round:
the NumPy floor (forward + hand-derived backward), tinygrad_attn through the fused
`scaled_dot_product_attention`, and tinygrad_attn composed from primitive ops; PyTorch eager is
added as a column when it is importable (never a dependency), and at (1, 8, 16) the fused
step's ops called by hand with no graph ("sdpa ops only": the framework's own NumPy work).
Medians of the rounds are printed with their ratios to the floor, then the per-op overhead of a
100-op elementwise chain, then the peak memory of one step (tracemalloc).

    python benchmarks/attention.py            # all sizes, float32 and float64
    python benchmarks/attention.py --quick    # under a minute
    python benchmarks/attention.py --float32 --json out.json --checkout DIR  # as run.py does
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

# One BLAS thread unless told otherwise (set the variables yourself to change it): on a shared
# 2-core machine OpenBLAS's threads spin against other processes and a 10 ms step can take a
# second, which measures the scheduler, not the framework. Both sides use the same BLAS.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402


def _checkout(argv: list[str]) -> str:
    """The tinygrad_attn checkout to measure: `--checkout DIR`, else the one holding this file
    (read before the import below, so `benchmarks/run.py` can time another checkout)."""
    for i, arg in enumerate(argv):
        if arg == "--checkout" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--checkout="):
            return arg.split("=", 1)[1]
    return str(Path(__file__).resolve().parent.parent)


sys.path.insert(0, _checkout(sys.argv[1:]))

import tinygrad_attn as ta  # noqa: E402
from tinygrad_attn.ops import MatMul, Mul, Sum  # noqa: E402
from tinygrad_attn.ops.attention import ScaledDotProductAttention  # noqa: E402

SIZES = [(1, 8, 16), (8, 128, 128), (4, 512, 256)]


def make_inputs(shape: tuple, dtype: np.dtype, seed: int = 0) -> tuple:
    batch, length, width = shape
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, length, width)).astype(dtype)
    weights = [
        (rng.standard_normal((width, width)) / np.sqrt(width)).astype(dtype) for _ in range(4)
    ]
    return x, weights


def floor_step(x: np.ndarray, weights: list) -> list:
    """Forward and hand-derived backward in plain NumPy; returns the four weight gradients."""
    wq, wk, wv, wo = weights
    batch, length, width = x.shape
    rows = x.reshape(-1, width)  # (B*T, D)
    q = (rows @ wq).reshape(batch, length, width)
    k = (rows @ wk).reshape(batch, length, width)
    v = (rows @ wv).reshape(batch, length, width)
    scale = 1 / np.sqrt(width)
    scores = q @ k.transpose(0, 2, 1)  # (B, T, T)
    scores *= scale
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    attn = scores  # (B, T, T)
    mixed = attn @ v  # (B, T, D)
    y = mixed.reshape(-1, width) @ wo  # (B*T, D)
    grad_y = 2 * y
    grad_wo = mixed.reshape(-1, width).T @ grad_y
    grad_mixed = (grad_y @ wo.T).reshape(batch, length, width)
    grad_v = attn.transpose(0, 2, 1) @ grad_mixed
    grad_attn = grad_mixed @ v.transpose(0, 2, 1)
    grad_attn -= (grad_attn * attn).sum(axis=-1, keepdims=True)
    grad_attn *= attn
    grad_attn *= scale
    grad_q = grad_attn @ k
    grad_k = grad_attn.transpose(0, 2, 1) @ q
    grad_wq = rows.T @ grad_q.reshape(-1, width)
    grad_wk = rows.T @ grad_k.reshape(-1, width)
    grad_wv = rows.T @ grad_v.reshape(-1, width)
    return [grad_wq, grad_wk, grad_wv, grad_wo]


def framework_step(x: np.ndarray, weights: list, fused: bool) -> list:
    """The same step with tinygrad_attn tensors; returns the four weight gradients."""
    xt = ta.from_numpy(x)
    params = [ta.from_numpy(w, requires_grad=True) for w in weights]
    wq, wk, wv, wo = params
    q, k, v = xt @ wq, xt @ wk, xt @ wv
    scale = 1 / np.sqrt(x.shape[-1])
    if fused:
        mixed = ScaledDotProductAttention.apply(q, k, v, scale=scale)
    else:
        mixed = ((q @ k.swapaxes(-1, -2)) * scale).softmax(axis=-1) @ v
    y = mixed @ wo
    loss = (y * y).sum()
    loss.backward()
    return [p.grad for p in params]


def _ctx(op: type, needs: tuple):
    """A bare ctx for calling an op's forward and backward by hand (no graph, no engine)."""
    ctx = op.__new__(op)
    ctx.needs_input_grad, ctx.parents = needs, (None,) * len(needs)
    return ctx


def ops_step(x: np.ndarray, weights: list) -> list:
    """The fused step's ops, forward then backward, called by hand on the arrays: what the
    framework's own NumPy work costs, without nodes, leaves, locks or `.grad` (the framework
    step minus this is the framework's fixed cost). Timed at the smallest size only: at the
    larger ones its arrays are freed in another order than the engine frees them, so glibc
    maps fresh pages for some of them and the difference measures the allocator."""
    wq, wk, wv, wo = weights
    projections = [_ctx(MatMul, (False, True)) for _ in range(3)]
    q, k, v = (MatMul.forward(c, x, w) for c, w in zip(projections, (wq, wk, wv)))
    attend = _ctx(ScaledDotProductAttention, (True, True, True))
    mixed = ScaledDotProductAttention.forward(attend, q, k, v, scale=1 / np.sqrt(x.shape[-1]))
    out = _ctx(MatMul, (True, True))
    y = MatMul.forward(out, mixed, wo)
    square, total = _ctx(Mul, (True, True)), _ctx(Sum, (True,))
    Sum.forward(total, Mul.forward(square, y, y))
    (grad_square,) = Sum.backward(total, np.ones((), x.dtype))
    grad_y = sum(Mul.backward(square, grad_square))  # (y * y has two edges to y)
    grad_mixed, grad_wo = MatMul.backward(out, grad_y)
    grads = ScaledDotProductAttention.backward(attend, grad_mixed)
    return [MatMul.backward(c, g)[1] for c, g in zip(projections, grads)] + [grad_wo]


def torch_step(torch, x: np.ndarray, weights: list) -> list:
    xt = torch.from_numpy(x)
    params = [torch.from_numpy(w.copy()).requires_grad_() for w in weights]
    wq, wk, wv, wo = params
    q, k, v = xt @ wq, xt @ wk, xt @ wv
    mixed = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    y = mixed @ wo
    (y * y).sum().backward()
    return [p.grad for p in params]


# Wall time, or with --clock thread the CPU time of this thread: on a busy machine other
# processes barely disturb it, and every variant here runs on one thread (one BLAS thread).
CLOCK = time.perf_counter


def time_once(fn, repeat: int) -> float:
    start = CLOCK()
    for _ in range(repeat):
        fn()
    return (CLOCK() - start) / repeat


def compare(shape: tuple, dtype: np.dtype, rounds: int, torch) -> dict:
    x, weights = make_inputs(shape, dtype)
    expected = floor_step(x, weights)
    tolerance = {"rtol": 2e-3 if dtype == np.float32 else 1e-9, "atol": 1e-4}
    for got in (framework_step(x, weights, True), framework_step(x, weights, False)):
        for g, e in zip(got, expected):  # the benchmark is worthless if the answers differ
            np.testing.assert_allclose(g, e, **tolerance)
    variants = {
        "floor": lambda: floor_step(x, weights),
        "sdpa": lambda: framework_step(x, weights, True),
        "composed": lambda: framework_step(x, weights, False),
    }
    if shape == SIZES[0]:  # (at the larger sizes it measures the allocator: see ops_step)
        for g, e in zip(ops_step(x, weights), expected):
            np.testing.assert_allclose(g, e, **tolerance)
        variants["ops"] = lambda: ops_step(x, weights)
    if torch is not None:
        variants["torch"] = lambda: torch_step(torch, x, weights)
    single = time_once(variants["floor"], 1)
    repeat = max(1, int(0.05 / max(single, 1e-6)))
    samples: dict = {name: [] for name in variants}
    for _ in range(rounds):  # interleaved: every round runs every variant
        for name, fn in variants.items():
            samples[name].append(time_once(fn, repeat))
    return {name: statistics.median(s) for name, s in samples.items()}


def chain_step(tensors) -> Any:
    """The per-op row's step: 100 elementwise ops on (4, 4) forward, then backward (101 ops
    with the sum), on a leaf made by `tensors`: this package, another checkout's (ab.py), or
    PyTorch (`torch`, whose tensors spell it the same)."""
    data = np.random.default_rng(0).random((4, 4)).astype(np.float32)
    x = tensors.from_numpy(data.copy())
    x.requires_grad_()

    def run() -> None:
        x.grad = None
        y = x
        for _ in range(50):
            y = y * 1.0001
            y = y + 0.5
        y.sum().backward()

    return run


def chain_overhead(rounds: int, torch=None) -> tuple:
    """Seconds per op of a 100-op elementwise chain on (4, 4), forward + backward: ours, NumPy
    alone doing the same arithmetic, and PyTorch eager (None without torch)."""
    a = np.random.default_rng(0).random((4, 4)).astype(np.float32)

    def floor() -> None:
        y = a
        for _ in range(50):
            y = y * np.float32(1.0001)
            y = y + np.float32(0.5)
        grad = np.ones_like(y)
        for _ in range(50):
            grad = grad * np.float32(1.0001)

    variants = {"ours": chain_step(ta), "numpy": floor}
    if torch is not None:
        variants["torch"] = chain_step(torch)
    samples: dict = {name: [] for name in variants}
    for _ in range(rounds):  # interleaved, as in `compare`: a slow phase hits every variant
        for name, fn in variants.items():
            samples[name].append(time_once(fn, 20) / 101)
    medians = {name: statistics.median(s) for name, s in samples.items()}
    return medians["ours"], medians["numpy"], medians.get("torch")


def peak_memory(fn) -> int:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds, float32 only")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (>= 9)")
    parser.add_argument("--float32", action="store_true", help="float32 only (issue 12's table)")
    parser.add_argument("--no-memory", action="store_true", help="skip the peak-memory line")
    parser.add_argument("--checkout", help="the tinygrad_attn checkout to import (default: ours)")
    parser.add_argument("--json", help="also write the medians (seconds) to this file")
    parser.add_argument("--clock", choices=["wall", "thread"], default="wall", help="see CLOCK")
    args = parser.parse_args(argv)
    if args.clock == "thread":
        global CLOCK
        CLOCK = time.thread_time
    rounds = args.rounds or (9 if args.quick else 15)
    dtypes = [np.float32] if args.quick or args.float32 else [np.float32, np.float64]
    results: dict = {"tinygrad_attn": ta.__file__, "rounds": rounds, "attention": [], "chain": {}}
    try:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
    except Exception:
        torch = None

    print(
        f"tinygrad_attn {ta.__version__}, numpy {np.__version__}, {rounds} interleaved rounds, "
        f"medians, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
    )
    header = (
        f"{'dtype':8} {'(B, T, D)':15} {'floor ms':>9} {'sdpa ms':>9} {'x floor':>8} "
        f"{'composed ms':>12} {'x floor':>8} {'sdpa ops only':>14}"
    )
    if torch is not None:
        header += f" {'torch ms':>9} {'x floor':>8}"
    print(header)
    for dtype in dtypes:
        for shape in SIZES:
            t = compare(shape, np.dtype(dtype), rounds, torch)
            results["attention"].append({"dtype": np.dtype(dtype).name, "shape": shape, **t})
            line = (
                f"{np.dtype(dtype).name:8} {str(shape):15} {t['floor'] * 1e3:9.3f} "
                f"{t['sdpa'] * 1e3:9.3f} {t['sdpa'] / t['floor']:7.2f}x "
                f"{t['composed'] * 1e3:12.3f} {t['composed'] / t['floor']:7.2f}x "
                + (f"{t['ops'] / t['floor']:13.2f}x" if "ops" in t else f"{'-':>14}")
            )
            if torch is not None:
                line += f" {t['torch'] * 1e3:9.3f} {t['torch'] / t['floor']:7.2f}x"
            print(line, flush=True)

    ours, numpy_only, theirs = chain_overhead(rounds, torch)
    results["chain"] = {"ours": ours, "numpy": numpy_only, "torch": theirs}
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    print(
        f"\nper-op chain (100 elementwise ops on (4, 4), forward + backward): "
        f"{ours * 1e6:.2f} us per op (NumPy alone for the same arithmetic: "
        f"{numpy_only * 1e6:.2f} us"
        + (f"; PyTorch eager: {theirs * 1e6:.2f} us" if theirs is not None else "")
        + ")"
    )

    if args.no_memory:
        return 0
    x, weights = make_inputs((4, 512, 256), np.dtype(np.float32))
    floor_peak = peak_memory(lambda: floor_step(x, weights))
    sdpa_peak = peak_memory(lambda: framework_step(x, weights, True))
    composed_peak = peak_memory(lambda: framework_step(x, weights, False))
    mib = 1 / 2**20
    print(
        f"peak memory of one step at (4, 512, 256) float32: floor {floor_peak * mib:.1f} MiB, "
        f"sdpa {sdpa_peak * mib:.1f} MiB ({sdpa_peak / floor_peak:.2f}x), composed "
        f"{composed_peak * mib:.1f} MiB ({composed_peak / floor_peak:.2f}x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
