#!/usr/bin/env python
# ruff: noqa: UP031, B007, B904
"""Training-step benchmark of a small transformer LM: tinygrad_attn vs PyTorch.

(Copied from the project's shared bench/train_peers.py, its method unchanged; printf-style
formatting kept as written, hence the ruff exemption above. `benchmarks/run.py` runs it.)

One Adam training step of a small causal transformer language model,
tinygrad_attn against PyTorch eager on CPU, in one interleaved run.

tinygrad_attn is imported from the current directory first, then PYTHONPATH:

    cd <tinygrad_attn checkout> && python <this repo>/bench/train_peers.py
    PYTHONPATH=<tinygrad_attn checkout> python bench/train_peers.py

    train_peers.py                  # full run (1.5-3.5 min on 2 cores)
    train_peers.py --quick          # < 60 s
    train_peers.py --sizes tiny --profile
    train_peers.py --json out.json  # every per-round time
    train_peers.py --mallopt        # page faults taken out (diagnostic)

Model (the same in both, as demo 3's TinyTransformer):
    token + position embeddings (T positions), N pre-norm TransformerBlocks
        x = x + attn(ln1(x));  x = x + mlp(ln2(x))
        attn: q/k/v/out Linear(E, E) with bias, H heads, fused causal
              scaled_dot_product_attention (both libraries)
        mlp:  Linear(E, 4E) -> GELU(tanh) -> Linear(4E, E)
    final LayerNorm, Linear(E, V) head, mean cross-entropy on next-token
    targets, Adam (lr 3e-3, betas (0.9, 0.999), eps 1e-8).
    The torch model's parameters have the same names and shapes and get
    tinygrad_attn's initial weights copied in.

Step timed (per implementation, per size):
    opt.zero_grad(); logits = model(ids); loss = cross_entropy(logits, targets, axis=-1)
    loss.backward(); opt.step()
with (ids, targets) cycling through 8 fixed random batches (the same ones for
every implementation; torch's are made into tensors once, before timing).

Sizes (float32):             vocab   T    E  heads blocks batch
    tiny   (about demo 3)      12    8   32    2     2     16
    small                      65   32   64    4     2     16
    medium                     65   64  128    4     4     32
    or give your own as VxTxExHxLxB, e.g. --sizes 65x32x64x4x2x16

Implementations:
    ta        tinygrad_attn; numpy's OpenBLAS with its own thread count N
    ta-1t     the same, OpenBLAS limited to 1 thread (threadpoolctl)
    torch-1t  PyTorch eager, torch.set_num_threads(1)
    torch-Nt  PyTorch eager, torch.set_num_threads(N)  (N: numpy's BLAS
              thread count unless --threads; 2 on a 2-core machine)
    Paired ratios: ta / torch-Nt and ta-1t / torch-1t (same thread count).

Correctness, before any timing, for every size in float64 and float32: one
step from identical weights on the same batch; the loss and every parameter's
gradient must agree (normwise relative error max|g_ta - g_torch| / max|g_torch|
per parameter, and over all parameters together; 1e-9 in float64, 1e-4 in
float32), and the gradients must have the model's dtype.  A parameter whose
gradient is zero in exact arithmetic (the key projection's bias: softmax is
unchanged by a shift of a whole row of scores) holds only rounding noise in
both; such a parameter (max |g| below sqrt(eps) times the model's largest
gradient) is checked against the model's largest gradient instead, and named.
In float64 the parameters after the Adam step and the loss of a second forward
must agree too.  Any failure aborts the run before timing.

Method (as bench/attn_peers.py): every implementation is warmed up and
calibrated so one timed batch of steps lasts about --target-ms; then
--repeats rounds, each running every implementation once in a freshly
shuffled order, grouped by thread-pool family (numpy's OpenBLAS / torch's
OpenMP; the families alternate direction from round to round) with a --settle
pause at each family switch, because on 2 cores a spinning pool of one family
slows the other; every batch is preceded by one untimed step, and the garbage
collector is off during the batch (as timeit does; --gc keeps it on).
Reported: median ms/step over rounds (min and max too), steps/s, and the
median over rounds of the per-round ratio ta / torch at the same thread count
(paired, so a slow phase of a busy machine hits both sides of a ratio), with
its min-max over rounds; minor page faults per step; per size, the other
processes' share of the CPUs and how many rounds it exceeded 10%.  Also, from
the checks: graph ops per step and the objects per step that only the cycle
collector frees.

Caveats seen on 2-core VMs: (1) when another process holds a core, any
2-thread pool (OpenBLAS, torch's OpenMP/MKL) can be 10-200x slower for a
round -- the 1-thread pair is the robust comparison; see the min-max and the
busy-round count.  (2) Freed big NumPy arrays may go back to the OS (glibc
malloc's trim / mmap threshold) and be page-faulted in again on the next step;
how many faults a step takes depends on the allocator's history, so absolute
times -- and a ratio whose sides fault differently -- can move between runs.
--mallopt keeps freed memory in the process, as a diagnostic of that cost.

--profile: a cProfile of --profile-steps steps of `ta` at each size, printed
per step: the top 15 functions by own time, and own time summed by area
(recording nodes, the backward loop, op code, modules, optimizer, NumPy);
then each phase of the step (zero_grad, forward, loss, backward, opt.step,
dropping the graph) timed for every implementation, with its page faults.
"""

import argparse
import contextlib
import cProfile
import gc
import importlib.util
import itertools
import json
import math
import os
import platform
import pstats
import random
import re
import resource
import statistics
import subprocess
import sys
import time

import numpy as np

SIZES = {
    "tiny": dict(vocab=12, T=8, E=32, heads=2, blocks=2, batch=16),
    "small": dict(vocab=65, T=32, E=64, heads=4, blocks=2, batch=16),
    "medium": dict(vocab=65, T=64, E=128, heads=4, blocks=4, batch=32),
}
LR = 3e-3
N_BATCHES = 8
TOL = {"float64": 1e-9, "float32": 1e-4}
BUSY = 0.10  # a round is "busy" when other processes used more than this share of the CPUs
ENV_VARS = [
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "MKL_ENABLE_INSTRUCTIONS",
]


def have(mod):
    return importlib.util.find_spec(mod) is not None


def parse_size(text):
    if text in SIZES:
        return text, dict(SIZES[text])
    try:
        v = [int(x) for x in text.split("x")]
        if len(v) != 6 or min(v) <= 0:
            raise ValueError
    except ValueError:
        raise SystemExit(
            "--sizes: %r is neither one of %s nor VxTxExHxLxB" % (text, ", ".join(SIZES))
        )
    cfg = dict(zip(("vocab", "T", "E", "heads", "blocks", "batch"), v))
    if cfg["E"] % cfg["heads"]:
        raise SystemExit("--sizes %s: E must be divisible by the number of heads" % text)
    return text, cfg


def describe(cfg):
    return "V=%(vocab)d T=%(T)d E=%(E)d H=%(heads)d L=%(blocks)d B=%(batch)d" % cfg


def make_batches(cfg, seed, n=N_BATCHES):
    """n (ids, targets) pairs of int64 (B, T): random token sequences of T+1,
    inputs the first T tokens, targets the next token at each position."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        seq = rng.integers(0, cfg["vocab"], size=(cfg["batch"], cfg["T"] + 1))
        out.append((np.ascontiguousarray(seq[:, :-1]), np.ascontiguousarray(seq[:, 1:])))
    return out


# ---------------------------------------------------------------- tinygrad_attn


def build_ta_model(cfg, dtype, seed):
    import tinygrad_attn as ta
    from tinygrad_attn import nn

    class LM(nn.Module):
        """demo.TinyTransformer, written out with the public nn API."""

        def __init__(self, vocab, max_len, E, heads, blocks):
            super().__init__()
            self.tokens = nn.Embedding(vocab, E)
            self.positions = nn.Embedding(max_len, E)
            self.blocks = nn.ModuleList(
                nn.TransformerBlock(E, heads, is_causal=True) for _ in range(blocks)
            )
            self.ln_f = nn.LayerNorm(E)
            self.head = nn.Linear(E, vocab)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions(np.arange(ids.shape[-1]))  # (B, T, E)
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))  # (B, T, V)

    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.dtype(dtype))
    try:
        ta.manual_seed(seed)
        model = LM(cfg["vocab"], cfg["T"], cfg["E"], cfg["heads"], cfg["blocks"])
    finally:
        ta.set_default_dtype(previous)
    return model


def class_last_cross_entropy():
    """F.cross_entropy for (B, T, V) logits: with `axis=-1` where it takes one (PyTorch's class
    axis 1 is the default since issue 24), as it is in a checkout from before (classes last)."""
    import functools
    import inspect

    import tinygrad_attn.functional as F

    if "axis" in inspect.signature(F.cross_entropy).parameters:
        return functools.partial(F.cross_entropy, axis=-1)
    return F.cross_entropy


class TaImpl:
    def __init__(self, cfg, dtype, seed, batches):
        from tinygrad_attn import optim

        self.model = build_ta_model(cfg, dtype, seed)
        self.opt = optim.Adam(self.model.parameters(), lr=LR)
        self.batches = batches
        self.cross_entropy = cross_entropy = class_last_cross_entropy()
        model, opt = self.model, self.opt
        cycle = itertools.cycle(batches)

        def step():
            ids, targets = next(cycle)
            opt.zero_grad()
            logits = model(ids)  # (B, T, V)
            loss = cross_entropy(logits, targets)  # class axis last
            loss.backward()
            opt.step()
            return loss

        self.step = step

        def phased(clock=time.perf_counter, faults=minor_faults):
            ids, targets = next(cycle)
            f0, t0 = faults(), clock()
            opt.zero_grad()
            f1, t1 = faults(), clock()
            logits = model(ids)
            f2, t2 = faults(), clock()
            loss = cross_entropy(logits, targets)  # class axis last
            f3, t3 = faults(), clock()
            loss.backward()
            f4, t4 = faults(), clock()
            opt.step()
            f5, t5 = faults(), clock()
            del logits, loss
            f6, t6 = faults(), clock()
            return (
                (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5),
                (f1 - f0, f2 - f1, f3 - f2, f4 - f3, f5 - f4, f6 - f5),
            )

        self.phased = phased

    def weights(self):
        return {n: p.numpy() for n, p in self.model.named_parameters()}

    def loss_and_grads(self, batch):
        self.opt.zero_grad()
        loss = self.cross_entropy(self.model(batch[0]), batch[1])
        loss.backward()
        grads = {
            n: None if p.grad is None else np.array(p.grad)
            for n, p in self.model.named_parameters()
        }
        return float(loss.item()), grads

    def opt_step(self):
        self.opt.step()

    def loss(self, batch):
        import tinygrad_attn as ta

        with ta.no_grad():
            return float(self.cross_entropy(self.model(batch[0]), batch[1]).item())

    def graph_nodes(self, batch):
        """Op histogram of the graph one step records (then released by backward)."""
        try:
            from tinygrad_attn.engine import graph_order  # internal: may move
        except ImportError:
            return {}
        self.opt.zero_grad()
        loss = self.cross_entropy(self.model(batch[0]), batch[1])
        counts = {}
        for node in graph_order([loss.grad_fn]):
            counts[node.name] = counts.get(node.name, 0) + 1
        loss.backward()
        self.opt.zero_grad()
        return counts


# ---------------------------------------------------------------- torch


def torch_classes():
    import torch
    import torch.nn.functional as TF
    from torch import nn

    class MultiHeadAttention(nn.Module):
        def __init__(self, E, heads):
            super().__init__()
            self.heads, self.head_dim = heads, E // heads
            self.q_proj = nn.Linear(E, E)
            self.k_proj = nn.Linear(E, E)
            self.v_proj = nn.Linear(E, E)
            self.out_proj = nn.Linear(E, E)

        def forward(self, x):
            B, T, E = x.shape

            def split(t):  # (B, T, E) -> (B, H, T, D)
                return t.view(B, T, self.heads, self.head_dim).transpose(1, 2)

            q, k, v = split(self.q_proj(x)), split(self.k_proj(x)), split(self.v_proj(x))
            out = TF.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, H, T, D)
            return self.out_proj(out.transpose(1, 2).reshape(B, T, E))

    class Block(nn.Module):
        def __init__(self, E, heads):
            super().__init__()
            self.ln1 = nn.LayerNorm(E)
            self.attn = MultiHeadAttention(E, heads)
            self.ln2 = nn.LayerNorm(E)
            self.mlp = nn.Sequential(
                nn.Linear(E, 4 * E), nn.GELU(approximate="tanh"), nn.Linear(4 * E, E)
            )

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class LM(nn.Module):
        def __init__(self, vocab, max_len, E, heads, blocks):
            super().__init__()
            self.tokens = nn.Embedding(vocab, E)
            self.positions = nn.Embedding(max_len, E)
            self.blocks = nn.ModuleList(Block(E, heads) for _ in range(blocks))
            self.ln_f = nn.LayerNorm(E)
            self.head = nn.Linear(E, vocab)

        def forward(self, ids):
            x = self.tokens(ids) + self.positions(torch.arange(ids.shape[-1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return LM


class TorchImpl:
    def __init__(self, cfg, dtype, seed, batches):
        import torch
        import torch.nn.functional as TF

        LM = torch_classes()
        torch.manual_seed(seed)
        model = LM(cfg["vocab"], cfg["T"], cfg["E"], cfg["heads"], cfg["blocks"])
        model = model.to(getattr(torch, dtype))
        src = build_ta_model(cfg, dtype, seed).named_parameters()
        copy_weights(dict(src), model)
        self.model = model
        self.opt = torch.optim.Adam(model.parameters(), lr=LR)
        self.batches = [(torch.from_numpy(i), torch.from_numpy(t)) for i, t in batches]
        opt, V = self.opt, cfg["vocab"]
        cycle = itertools.cycle(self.batches)
        cross_entropy = TF.cross_entropy

        def step():
            ids, targets = next(cycle)
            opt.zero_grad()
            logits = model(ids)  # (B, T, V)
            loss = cross_entropy(logits.view(-1, V), targets.view(-1))
            loss.backward()
            opt.step()
            return loss

        self.step = step
        self.V = V

        def phased(clock=time.perf_counter, faults=minor_faults):
            ids, targets = next(cycle)
            f0, t0 = faults(), clock()
            opt.zero_grad()
            f1, t1 = faults(), clock()
            logits = model(ids)
            f2, t2 = faults(), clock()
            loss = cross_entropy(logits.view(-1, V), targets.view(-1))
            f3, t3 = faults(), clock()
            loss.backward()
            f4, t4 = faults(), clock()
            opt.step()
            f5, t5 = faults(), clock()
            del logits, loss
            f6, t6 = faults(), clock()
            return (
                (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5),
                (f1 - f0, f2 - f1, f3 - f2, f4 - f3, f5 - f4, f6 - f5),
            )

        self.phased = phased

    def _batch(self, batch):
        import torch

        return torch.from_numpy(batch[0]), torch.from_numpy(batch[1])

    def weights(self):
        return {n: p.detach().numpy() for n, p in self.model.named_parameters()}

    def loss_and_grads(self, batch):
        import torch.nn.functional as TF

        ids, targets = self._batch(batch)
        self.opt.zero_grad()
        loss = TF.cross_entropy(self.model(ids).view(-1, self.V), targets.view(-1))
        loss.backward()
        grads = {
            n: None if p.grad is None else p.grad.detach().numpy().copy()
            for n, p in self.model.named_parameters()
        }
        return float(loss.item()), grads

    def opt_step(self):
        self.opt.step()

    def loss(self, batch):
        import torch
        import torch.nn.functional as TF

        ids, targets = self._batch(batch)
        with torch.no_grad():
            return float(
                TF.cross_entropy(self.model(ids).view(-1, self.V), targets.view(-1)).item()
            )

    def graph_nodes(self, batch):
        """Op histogram of the autograd graph one step records."""
        import torch.nn.functional as TF

        ids, targets = self._batch(batch)
        loss = TF.cross_entropy(self.model(ids).view(-1, self.V), targets.view(-1))
        counts, seen, stack = {}, set(), [loss.grad_fn]
        while stack:
            fn = stack.pop()
            if fn is None or fn in seen:
                continue
            seen.add(fn)
            name = type(fn).__name__
            if name != "AccumulateGrad":  # leaves, not ops
                counts[name] = counts.get(name, 0) + 1
            stack.extend(f for f, _ in fn.next_functions)
        del loss
        return counts


def copy_weights(src, model):
    """Copy tinygrad_attn's parameters (name -> Tensor) into the torch model,
    insisting on the same names, shapes and dtypes."""
    import torch

    dst = dict(model.named_parameters())
    if set(src) != set(dst):
        abort(
            "the two models' parameters differ: only in tinygrad_attn %s; only in "
            "torch %s" % (sorted(set(src) - set(dst)), sorted(set(dst) - set(src)))
        )
    with torch.no_grad():
        for name, p in dst.items():
            a = np.asarray(src[name].data)
            if tuple(p.shape) != a.shape or str(p.dtype).replace("torch.", "") != str(a.dtype):
                abort(
                    "parameter %s: torch %s %s, tinygrad_attn %s %s"
                    % (name, tuple(p.shape), p.dtype, a.shape, a.dtype)
                )
            p.copy_(torch.from_numpy(a.copy()))


def abort(msg):
    print("\nABORT: " + msg)
    sys.stdout.flush()
    print("ABORT: " + msg.split("\n")[0] + " (details on stdout)", file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------- implementations


class Impl:
    def __init__(self, name, factory, ctx, family, note=""):
        self.name, self.factory, self.ctx = name, factory, ctx
        self.family, self.note = family, note


def blas_threads():
    """numpy's BLAS thread count (threadpoolctl), else os.cpu_count()."""
    if have("threadpoolctl"):
        from threadpoolctl import threadpool_info

        n = [
            i["num_threads"]
            for i in threadpool_info()
            if i["user_api"] == "blas" and "numpy" in os.path.dirname(i.get("filepath", ""))
        ]
        if n:
            return n[0]
    return os.cpu_count() or 1


def build_impls(nthreads):
    impls = [
        Impl(
            "ta",
            TaImpl,
            contextlib.nullcontext,
            "numpy",
            "numpy's OpenBLAS, %d thread(s)" % nthreads,
        )
    ]
    skipped = []
    if have("threadpoolctl"):
        from threadpoolctl import ThreadpoolController

        ctl = ThreadpoolController()
        impls.append(
            Impl(
                "ta-1t",
                TaImpl,
                lambda: ctl.limit(limits=1, user_api="blas"),
                "numpy",
                "OpenBLAS 1 thread",
            )
        )
    else:
        skipped.append("ta-1t (threadpoolctl missing)")
    if have("torch"):

        def threads(n):
            @contextlib.contextmanager
            def c():
                import torch

                old = torch.get_num_threads()
                torch.set_num_threads(n)
                try:
                    yield
                finally:
                    torch.set_num_threads(old)

            return c

        impls.append(Impl("torch-1t", TorchImpl, threads(1), "torch"))
        if nthreads != 1:
            impls.append(Impl("torch-%dt" % nthreads, TorchImpl, threads(nthreads), "torch"))
    else:
        skipped.append("torch (not installed)")
    return impls, skipped


def pairs_for(names, nthreads):
    """(numerator, denominator, label) of the paired ratios to report."""
    tn = "torch-%dt" % nthreads
    want = [
        (
            "ta",
            tn if nthreads != 1 else "torch-1t",
            "ta / %s" % (tn if nthreads != 1 else "torch-1t"),
        ),
        ("ta-1t", "torch-1t", "ta-1t / torch-1t"),
        ("ta", "ta-1t", "ta / ta-1t (BLAS threads)"),
        (tn, "torch-1t", "%s / torch-1t (torch threads)" % tn),
    ]
    return [(a, b, lab) for a, b, lab in want if a in names and b in names and a != b]


# ---------------------------------------------------------------- checks


def normwise(got, ref):
    d = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max())
    s = float(np.abs(ref.astype(np.float64)).max())
    return d, s


def check_size(label, cfg, dtype, seed, torch_ctx):
    """One step of both from the same weights; returns the check record or
    aborts.  torch_ctx: the thread context the torch side runs in."""
    batches = make_batches(cfg, seed + 1)
    a = TaImpl(cfg, dtype, seed, batches)
    with torch_ctx():
        b = TorchImpl(cfg, dtype, seed, batches)
    w_a, w_b = a.weights(), b.weights()
    for n in w_a:
        if not np.array_equal(w_a[n], w_b[n]):
            abort("%s %s: weights of %s differ after copying" % (label, dtype, n))
    batch = batches[0]
    la, ga = a.loss_and_grads(batch)
    with torch_ctx():
        lb, gb = b.loss_and_grads(batch)
    tol = TOL[dtype]
    eps = float(np.finfo(dtype).eps)
    problems = []
    loss_rel = abs(la - lb) / abs(lb)
    if not loss_rel <= tol:
        problems.append(
            "loss %.17g (tinygrad_attn) vs %.17g (torch): relative error %.2e > %g"
            % (la, lb, loss_rel, tol)
        )
    missing = [n for n in ga if ga[n] is None or gb[n] is None]
    if missing:
        problems.append("no gradient for %s" % missing)
    bad_dtype = sorted({str(g.dtype) for g in ga.values() if g is not None} - {dtype})
    if bad_dtype:
        problems.append("tinygrad_attn gradients of dtype %s in a %s model" % (bad_dtype, dtype))
    per = {}
    for n in ga:
        if ga[n] is None or gb[n] is None:
            continue
        if ga[n].shape != gb[n].shape:
            problems.append("%s: gradient shapes %s vs %s" % (n, ga[n].shape, gb[n].shape))
            continue
        per[n] = normwise(ga[n], gb[n])
    if not per:
        abort(
            "%s %s: no gradient could be compared:\n  - %s"
            % (label, dtype, "\n  - ".join(problems))
        )
    gmax = max(s for _, s in per.values())
    dmax = max(d for d, _ in per.values())
    overall = dmax / gmax
    if not overall <= tol:
        problems.append(
            "gradients over all parameters: normwise relative error %.2e > %g" % (overall, tol)
        )
    noise_floor = math.sqrt(eps) * gmax
    null = sorted(n for n, (_, s) in per.items() if s <= noise_floor)
    rel = {n: d / s for n, (d, s) in per.items() if n not in null}
    worst = max(rel, key=rel.get)
    for n, r in rel.items():
        if not r <= tol:
            problems.append(
                "%s: gradient normwise relative error %.2e > %g "
                "(max |g| torch %.3e)" % (n, r, tol, per[n][1])
            )
    for n in null:
        if not per[n][0] <= tol * gmax:
            problems.append(
                "%s: gradient at rounding-noise level differs by %.2e, more than "
                "%g x the largest gradient %.3e" % (n, per[n][0], tol, gmax)
            )
    rec = {
        "size": label,
        "dtype": dtype,
        "loss_ta": la,
        "loss_torch": lb,
        "loss_rel": loss_rel,
        "grad_overall_rel": overall,
        "grad_worst_param": worst,
        "grad_worst_rel": rel[worst],
        "grad_max": gmax,
        "null_grad_params": {
            n: {
                "max_abs_ta": float(np.abs(ga[n]).max()),
                "max_abs_torch": per[n][1],
                "max_abs_diff": per[n][0],
            }
            for n in null
        },
        "per_param_rel": rel,
        "tol": tol,
    }
    # After the Adam step: parameters and the loss of a second forward.
    a.opt_step()
    with torch_ctx():
        b.opt_step()
    w_a, w_b = a.weights(), b.weights()
    p_rel = {}
    for n in w_a:
        d, s = normwise(w_a[n], w_b[n])
        p_rel[n] = d / max(s, 1e-300)
    # Adam's first update is lr * g / (|g| + eps): for a gradient at rounding-noise level
    # its sign is noise, so such parameters (float32) may differ by up to 2 lr.
    p_err = max(r for n, r in p_rel.items() if n not in null)
    p_err_null = max((p_rel[n] for n in null), default=0.0)
    l2a = a.loss(batches[1])
    with torch_ctx():
        l2b = b.loss(batches[1])
    l2_rel = abs(l2a - l2b) / abs(l2b)
    rec.update(
        after_step_param_rel=p_err,
        after_step_null_param_rel=p_err_null,
        step2_loss_ta=l2a,
        step2_loss_torch=l2b,
        step2_loss_rel=l2_rel,
    )
    if dtype == "float64":
        if not max(p_err, p_err_null) <= tol:
            problems.append(
                "parameters after one Adam step: normwise relative error %.2e > %g"
                % (max(p_err, p_err_null), tol)
            )
        if not l2_rel <= tol:
            problems.append("loss after one Adam step: relative error %.2e > %g" % (l2_rel, tol))
    rec["ok"] = not problems
    rec["problems"] = problems
    if problems:
        shown = problems[:12] + (
            ["... and %d more" % (len(problems) - 12)] if len(problems) > 12 else []
        )
        abort(
            "tinygrad_attn and torch disagree on %s (%s) in %s:\n  - %s\n"
            "Nothing was timed." % (label, describe(cfg), dtype, "\n  - ".join(shown))
        )
    with torch_ctx():
        rec["nodes_ta"] = a.graph_nodes(batch)
        rec["nodes_torch"] = b.graph_nodes(batch)
        rec["cyclic_garbage_ta"] = cyclic_garbage(a.step)
        rec["cyclic_garbage_torch"] = cyclic_garbage(b.step)
    return rec


def cyclic_garbage(step, n=5):
    """Objects per step that only the cycle collector frees (reference cycles)."""
    step()
    gcold = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        for _ in range(n):
            step()
        return gc.collect() / n
    finally:
        if gcold:
            gc.enable()


def minor_faults():
    try:
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    except (OSError, ValueError):
        return 0


def set_mallopt():
    """glibc: keep freed memory in the process (no dynamic mmap threshold, no
    trimming), so big arrays are not returned to the OS and page-faulted in
    again on the next step.  Returns a note, or None if not glibc."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        m_trim, m_mmap = -1, -3  # M_TRIM_THRESHOLD, M_MMAP_THRESHOLD (malloc.h)
        ok = libc.mallopt(m_mmap, 256 << 20) == 1 and libc.mallopt(m_trim, 1 << 30) == 1
        return "mallopt(M_MMAP_THRESHOLD=256 MiB, M_TRIM_THRESHOLD=1 GiB)" if ok else None
    except (OSError, AttributeError):
        return None


# ---------------------------------------------------------------- timing


# The clock of the timed batches: wall time, or with --clock thread (changed from
# train_peers.py) the CPU time of the main thread, which other processes on a busy machine
# barely disturb; it is a fair clock here only because every compared side runs on one thread.
CLOCK = time.perf_counter


class Cell:
    def __init__(self, impl, fn):
        self.impl, self.fn, self.number, self.times = impl, fn, 1, []
        self.faults = []  # minor page faults per step, per round


def calibrate(cell, target):
    with cell.impl.ctx():
        cell.fn()
        n = 1
        while True:
            t0 = CLOCK()
            for _ in range(n):
                cell.fn()
            dt = CLOCK() - t0
            if dt >= target * 0.2 or n >= 1 << 20:
                break
            n *= 4
    cell.number = max(1, int(math.ceil(n * target / max(dt, 1e-9))))


def cpu_ticks():
    """(all, steal, idle+iowait) jiffies from /proc/stat, or None."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v[:8]), v[7], v[3] + v[4]
    except (OSError, IndexError, ValueError):
        return None


class LoadMeter:
    """Steal time, and the CPU time of other processes, over an interval: the
    machine's busy time (/proc/stat) minus this process's own CPU time, as a
    share of all CPUs (1.0 = every core busy with someone else's work)."""

    def __init__(self):
        self.t, self.c, self.own = time.perf_counter(), cpu_ticks(), self._own()

    @staticmethod
    def _own():
        t = os.times()
        return t.user + t.system

    def stop(self):
        c1, dt = cpu_ticks(), time.perf_counter() - self.t
        own = self._own() - self.own
        out = {}
        if self.c and c1 and c1[0] > self.c[0]:
            all_j = c1[0] - self.c[0]
            out["steal"] = (c1[1] - self.c[1]) / all_j
            busy_s = (all_j - (c1[2] - self.c[2])) / os.sysconf("SC_CLK_TCK")
            out["others"] = max(0.0, busy_s - own) / (dt * (os.cpu_count() or 1))
        return out


def family_order(cells, r, rng):
    """Round r: families alternate direction so that consecutive rounds meet
    on the same family (one family switch per round); cells shuffled within."""
    fams = list(dict.fromkeys(c.impl.family for c in cells))
    if r % 2:
        fams.reverse()
    order = []
    for fam in fams:
        block = [c for c in cells if c.impl.family == fam]
        rng.shuffle(block)
        order += block
    return order


def measure(cells, repeats, target, rng, settle, keep_gc):
    """Interleaved timing.  OpenBLAS workers spin ~0.1 s after a call and
    libgomp workers spin too; on 2 cores a spinning pool of one family slows
    the next family's threads badly, so a switch of family sleeps `settle`
    seconds first.  Every batch is preceded by one untimed call.  Returns,
    per round, the order run and the other processes' share of the CPUs."""
    prev = [None]
    rounds = []

    def switch(c):
        if prev[0] is not None and prev[0] != c.impl.family:
            time.sleep(settle)
        prev[0] = c.impl.family

    for c in family_order(cells, 0, rng):
        switch(c)
        calibrate(c, target)
    for r in range(repeats):
        meter = LoadMeter()
        order = family_order(cells, r + 1, rng)
        for c in order:
            switch(c)
            fn, number = c.fn, c.number
            with c.impl.ctx():
                fn()  # untimed call after a context/thread switch
                gcold = gc.isenabled()
                if not keep_gc:
                    gc.disable()
                try:
                    f0 = minor_faults()
                    t0 = CLOCK()
                    for _ in range(number):
                        fn()
                    dt = CLOCK() - t0
                    f1 = minor_faults()
                finally:
                    if gcold:
                        gc.enable()
            c.times.append(dt / number)
            c.faults.append((f1 - f0) / number)
        load = meter.stop()
        rounds.append(
            {
                "order": [c.impl.name for c in order],
                "others": load.get("others"),
                "steal": load.get("steal"),
            }
        )
    return rounds


def stats(times):
    return {
        "min": min(times),
        "median": statistics.median(times),
        "max": max(times),
        "n": len(times),
    }


# ---------------------------------------------------------------- profile

AREAS = [
    ("recording nodes (function.py: Function.apply, locks, release)", "function.py"),
    ("backward loop (engine.py: sort, loop, accumulate)", "engine.py"),
    ("op forward/backward bodies (ops/; incl. NumPy operators and ufuncs they call)", "ops/"),
    ("Tensor methods (tensor.py)", "tensor.py"),
    ("functional composites (functional/)", "functional/"),
    ("modules (nn/: __call__, checks, forward)", "nn/"),
    ("optimizer (optim.py)", "optim.py"),
]


def area_of(key, pkg_dir):
    fname, _, func = key
    if fname == "~":
        return (
            "NumPy C functions/methods called by name (ndarray.sum, np.zeros, ...)"
            if "numpy" in func
            else "Python built-ins (isinstance, len, dict/list ops, ...)"
        )
    f = fname.replace(os.sep, "/")
    if pkg_dir and f.startswith(pkg_dir):
        rel = f[len(pkg_dir) :]
        for label, part in AREAS:
            if (part.endswith("/") and rel.startswith(part)) or rel == part:
                return label
        return "other tinygrad_attn files"
    if "/numpy/" in f:
        return "NumPy Python code (numpy/*.py)"
    if os.path.abspath(fname) == os.path.abspath(__file__):
        return "benchmark harness"
    return "other Python code"


def short_name(key, pkg_dir):
    fname, line, func = key
    if fname == "~":
        return re.sub(r" at 0x[0-9a-fA-F]+", "", func)
    f = fname.replace(os.sep, "/")
    if pkg_dir and f.startswith(pkg_dir):
        f = "tinygrad_attn/" + f[len(pkg_dir) :]
    elif "/numpy/" in f:
        f = "numpy/" + f.split("/numpy/", 1)[1]
    else:
        f = os.path.basename(f)
    return "%s:%d(%s)" % (f, line, func)


def profile_ta(label, cfg, seed, steps, impl, top=15):
    import tinygrad_attn

    pkg_dir = os.path.dirname(os.path.abspath(tinygrad_attn.__file__)).replace(os.sep, "/") + "/"
    batches = make_batches(cfg, seed + 1)
    ta_impl = TaImpl(cfg, "float32", seed, batches)
    step = ta_impl.step
    with impl.ctx():
        for _ in range(3):
            step()
        gc.collect()
        prof = cProfile.Profile()
        f0, t0 = minor_faults(), time.perf_counter()
        prof.enable()
        for _ in range(steps):
            step()
        prof.disable()
        wall = (time.perf_counter() - t0) / steps
        faults = (minor_faults() - f0) / steps
    st = pstats.Stats(prof)
    rows = []
    total_tt = 0.0
    areas = {}
    for key, (cc, nc, tt, ct, _callers) in st.stats.items():
        total_tt += tt
        a = area_of(key, pkg_dir)
        ar = areas.setdefault(a, {"tottime": 0.0, "calls": 0, "functions": []})
        ar["tottime"] += tt
        ar["calls"] += nc
        ar["functions"].append((tt / steps, short_name(key, pkg_dir)))
        rows.append(
            {
                "function": short_name(key, pkg_dir),
                "ncalls": nc / steps,
                "primitive_calls": cc / steps,
                "tottime": tt / steps,
                "cumtime": ct / steps,
                "area": a,
            }
        )
    rows.sort(key=lambda r: -r["tottime"])
    for a in areas.values():
        a["tottime"] /= steps
        a["calls"] /= steps
        a["functions"] = [
            {"function": f, "tottime": t} for t, f in sorted(a["functions"], reverse=True)[:5]
        ]
    total_tt /= steps
    apply_calls = sum(
        r["ncalls"]
        for r in rows
        if r["function"].startswith("tinygrad_attn/function.py")
        and r["function"].endswith("(apply)")
    )
    bwd_calls = sum(
        r["ncalls"]
        for r in rows
        if r["function"].endswith("(backward)") and r["function"].startswith("tinygrad_attn/ops/")
    )
    prof_out = {
        "size": label,
        "impl": impl.name,
        "steps": steps,
        "wall_per_step_profiled": wall,
        "tottime_per_step": total_tt,
        "minor_faults_per_step": faults,
        "function_apply_calls_per_step": apply_calls,
        "op_backward_calls_per_step": bwd_calls,
        "areas": areas,
        "top": rows[:top],
        "all_functions": len(rows),
    }

    print(
        "\n### cProfile of `%s` at %s (%s), float32: per step, averaged over %d steps"
        % (impl.name, label, describe(cfg), steps)
    )
    print(
        "profiled wall time %.2f ms/step (cProfile adds overhead to every Python call); "
        "own time summed over all functions %.2f ms/step" % (wall * 1e3, total_tt * 1e3)
    )
    print(
        "Function.apply calls (graph nodes recorded): %.0f per step; op backward calls: %.0f;"
        " minor page faults: %.0f per step (their kernel time lands in whichever function "
        "touched the fresh memory)" % (apply_calls, bwd_calls, faults)
    )
    print("\ntop %d by own time (tottime):" % top)
    print("| calls/step | tottime ms/step | % of own time | us/call | cumtime ms/step | function |")
    print("|---:|---:|---:|---:|---:|---|")
    for r in rows[:top]:
        print(
            "| %.0f | %.3f | %.1f%% | %.2f | %.3f | `%s` |"
            % (
                r["ncalls"],
                r["tottime"] * 1e3,
                100 * r["tottime"] / total_tt,
                r["tottime"] * 1e6 / max(r["ncalls"], 1e-9),
                r["cumtime"] * 1e3,
                r["function"],
            )
        )
    print(
        "\nown time by area (ufuncs and operators on arrays, e.g. a @ b or np.exp(x), are "
        "not seen by cProfile: their time is inside the Python function that ran them):"
    )
    print("| area | tottime ms/step | % | calls/step | largest (ms/step) |")
    print("|---|---:|---:|---:|---|")
    for a, v in sorted(areas.items(), key=lambda kv: -kv[1]["tottime"]):
        top3 = ", ".join(
            "`%s` %.3f" % (re.sub(r"^tinygrad_attn/", "", f["function"]), f["tottime"] * 1e3)
            for f in v["functions"][:3]
        )
        print(
            "| %s | %.3f | %.1f%% | %.0f | %s |"
            % (a, v["tottime"] * 1e3, 100 * v["tottime"] / total_tt, v["calls"], top3)
        )
    return prof_out


PHASES = ("zero_grad", "forward", "loss", "backward", "opt.step", "drop graph")


def phase_split(label, cfg, seed, impls, rounds, target, settle, keep_gc):
    """Median time of each phase of the step, per implementation: rounds of
    about `target` seconds each, the implementations interleaved (shuffled,
    settle pause on a family switch), gc as in the timing."""
    batches = make_batches(cfg, seed + 1)
    rng = random.Random(seed)
    objs = []
    for imp in impls:
        with imp.ctx():
            objs.append((imp, imp.factory(cfg, "float32", seed, batches)))
    numbers, samples = {}, {imp.name: [] for imp in impls}
    for imp, obj in objs:
        with imp.ctx():
            for _ in range(3):
                obj.phased()
            t0 = time.perf_counter()
            obj.phased()
            numbers[imp.name] = max(3, int(target / max(time.perf_counter() - t0, 1e-6)))
    prev = None
    for _ in range(rounds):
        order = list(objs)
        rng.shuffle(order)
        order.sort(key=lambda o: o[0].family)
        for imp, obj in order:
            if prev is not None and prev != imp.family:
                time.sleep(settle)
            prev = imp.family
            with imp.ctx():
                obj.phased()
                gcold = gc.isenabled()
                if not keep_gc:
                    gc.disable()
                try:
                    for _ in range(numbers[imp.name]):
                        samples[imp.name].append(obj.phased())
                finally:
                    if gcold:
                        gc.enable()
    out = {}
    for imp in impls:
        times = [t for t, _ in samples[imp.name]]
        faults = [f for _, f in samples[imp.name]]
        out[imp.name] = {ph: statistics.median(c) for ph, c in zip(PHASES, zip(*times))}
        out[imp.name]["total"] = statistics.median(sum(r) for r in times)
        out[imp.name]["faults"] = {ph: statistics.mean(c) for ph, c in zip(PHASES, zip(*faults))}
        out[imp.name]["samples"] = len(times)
    return out


def print_phases(label, cfg, split, pairs):
    print(
        "\n### phases of one step at %s (%s), float32: median ms per phase "
        "(interleaved, %s steps each)"
        % (label, describe(cfg), "/".join(str(v["samples"]) for v in split.values()))
    )
    print("| impl | " + " | ".join(PHASES) + " | whole step |")
    print("|---|" + "---:|" * (len(PHASES) + 1))
    for n, v in split.items():
        print(
            "| %s | %s | %s |"
            % (n, " | ".join("%.3f" % (v[ph] * 1e3) for ph in PHASES), "%.3f" % (v["total"] * 1e3))
        )
    for x, y in pairs:
        if x in split and y in split:
            print(
                "| %s / %s | %s | %s |"
                % (
                    x,
                    y,
                    " | ".join(
                        "%.2fx" % (split[x][ph] / split[y][ph]) if split[y][ph] > 0 else "-"
                        for ph in PHASES
                    ),
                    "%.2fx" % (split[x]["total"] / split[y]["total"]),
                )
            )
    for n, v in split.items():
        print(
            "| %s page faults | %s | %.0f |"
            % (n, " | ".join("%.0f" % v["faults"][ph] for ph in PHASES), sum(v["faults"].values()))
        )


# ---------------------------------------------------------------- machine info


def machine_info(nthreads):
    info = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpu_count": os.cpu_count(),
        "numpy_blas_threads": nthreads,
        "env": {k: os.environ.get(k, "<unset>") for k in ENV_VARS},
    }
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            info["cpu"] = m.group(1) if m else platform.processor()
    except OSError:
        info["cpu"] = platform.processor()
    try:
        cfg = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        info["numpy_blas_build"] = "%s %s" % (cfg.get("name"), cfg.get("version"))
    except Exception as e:  # noqa: BLE001
        info["numpy_blas_build"] = "unknown (%s)" % e
    if have("threadpoolctl"):
        from threadpoolctl import threadpool_info

        info["threadpoolctl"] = [
            {k: (os.path.basename(v) if k == "filepath" else v) for k, v in d.items()}
            for d in threadpool_info()
        ]
    env = dict(os.environ, OPENBLAS_VERBOSE="2")
    p = subprocess.run(
        [sys.executable, "-c", "import numpy as np; a=np.ones((8,8)); a@a"],
        capture_output=True,
        text=True,
        env=env,
    )
    m = re.search(r"Core:\s*(\S+)", p.stdout + p.stderr)
    info["openblas_core"] = m.group(1) if m else "unknown"
    versions = {}
    from importlib.metadata import version

    for mod in ("torch", "threadpoolctl"):
        if have(mod):
            try:
                versions[mod] = version(mod)
            except Exception:  # noqa: BLE001
                versions[mod] = "?"
    info["versions"] = versions
    import tinygrad_attn

    here = os.path.dirname(os.path.abspath(tinygrad_attn.__file__))
    info["tinygrad_attn"] = getattr(tinygrad_attn, "__version__", "?")
    info["tinygrad_attn_path"] = here
    for key, cmd in (
        ("tinygrad_attn_commit", ["git", "rev-parse", "HEAD"]),
        ("tinygrad_attn_dirty", ["git", "status", "--porcelain", "--", "."]),
    ):
        try:
            p = subprocess.run(cmd, cwd=here, capture_output=True, text=True, timeout=10)
            out = p.stdout.strip()
            info[key] = (
                (out if key.endswith("commit") else bool(out)) if p.returncode == 0 else None
            )
        except (OSError, subprocess.SubprocessError):
            info[key] = None
    if have("torch"):
        import torch

        info["torch_default_threads"] = torch.get_num_threads()
        cfg = torch.__config__.show()
        m = re.search(r"BLAS_INFO=(\w+)", cfg)
        info["torch_blas"] = m.group(1) if m else "?"
        m = re.search(r"CPU capability usage: (\w+)", cfg)
        info["torch_cpu_capability"] = m.group(1) if m else "?"
        try:  # which Adam implementation torch picks for CPU tensors by default
            from torch.optim.optimizer import _default_to_fused_or_foreach

            fused, foreach = _default_to_fused_or_foreach(
                [torch.zeros(1, requires_grad=True)], False, use_fused=False
            )
            info["torch_adam"] = (
                "fused" if fused else "foreach" if foreach else "single-tensor loop"
            )
        except Exception:  # noqa: BLE001
            info["torch_adam"] = "?"
    return info


def _loadavg():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


# ---------------------------------------------------------------- report


def ms(t):
    return "%.3f" % (t * 1e3) if t < 1e-2 else "%.2f" % (t * 1e3) if t < 1 else "%.0f" % (t * 1e3)


def print_tables(res, ratios, names, sizes, nthreads):
    main_pair = {}
    for a, b, lab in pairs_for(names, nthreads):
        if a.startswith("ta") and b.startswith("torch"):
            main_pair[a] = b
    print("\n### one training step, float32: median over rounds")
    print(
        "| size | impl | ms/step | steps/s | min-max ms | paired ratio to torch, same threads "
        "[min-max over rounds] | page faults/step |"
    )
    print("|---|---|---:|---:|---|---|---:|")
    for label, cfg in sizes:
        for n in names:
            r = res.get((label, n))
            if not r:
                continue
            cell = "-"
            if n in main_pair:
                q = ratios.get((label, n, main_pair[n]))
                if q:
                    cell = "**%.2fx** vs %s [%.2f-%.2f]" % (
                        q["median"],
                        main_pair[n],
                        min(q["per_round"]),
                        max(q["per_round"]),
                    )
            print(
                "| %s | %s | %s | %.0f | %s-%s | %s | %.0f |"
                % (
                    label,
                    n,
                    ms(r["median"]),
                    1 / r["median"],
                    ms(r["min"]),
                    ms(r["max"]),
                    cell,
                    r["minor_faults_median"],
                )
            )
    print("\n### paired ratios: median over rounds of the per-round ratio [min-max]")
    pl = pairs_for(names, nthreads)
    print(
        "| size | " + " | ".join(lab for _, _, lab in pl) + " | best ta / best torch "
        "(ratio of medians) |"
    )
    print("|---|" + "---|" * (len(pl) + 1))
    for label, cfg in sizes:
        row = []
        for a, b, _ in pl:
            q = ratios.get((label, a, b))
            row.append(
                "%.2f [%.2f-%.2f]" % (q["median"], min(q["per_round"]), max(q["per_round"]))
                if q
                else "-"
            )
        tas = [res[(label, n)]["median"] for n in names if n.startswith("ta") and (label, n) in res]
        tos = [
            res[(label, n)]["median"] for n in names if n.startswith("torch") and (label, n) in res
        ]
        row.append("%.2f" % (min(tas) / min(tos)) if tas and tos else "-")
        print("| %s | %s |" % (label, " | ".join(row)))


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n".join(__doc__.split("\n")[1:]),
    )
    ap.add_argument(
        "--sizes",
        default="tiny,small,medium",
        help="comma list of %s or VxTxExHxLxB (default: all three)" % "/".join(SIZES),
    )
    ap.add_argument("--repeats", type=int, help="timed rounds per size (default 9; --quick 3)")
    ap.add_argument("--quick", action="store_true", help="short run (< 60 s)")
    ap.add_argument("--json", help="write every per-round time (and the checks) to this file")
    ap.add_argument(
        "--profile",
        action="store_true",
        help="cProfile `ta` steps at each size and print a per-step summary",
    )
    ap.add_argument(
        "--profile-steps",
        type=int,
        default=10,
        help="steps profiled per size (default 10; printed per step)",
    )
    ap.add_argument(
        "--profile-impl",
        default="ta",
        choices=["ta", "ta-1t"],
        help="BLAS threading of the profiled steps (default ta)",
    )
    ap.add_argument(
        "--target-ms", type=float, help="time per timed batch (default 300 ms; --quick 40 ms)"
    )
    ap.add_argument(
        "--threads", type=int, help="N for torch-Nt (default: numpy's BLAS thread count)"
    )
    ap.add_argument(
        "--impls", help="comma list of implementations to keep (ta, ta-1t, torch-1t, torch-Nt)"
    )
    ap.add_argument(
        "--settle",
        type=float,
        default=0.25,
        help="pause (s) when switching thread-pool family (default 0.25)",
    )
    ap.add_argument(
        "--gc", action="store_true", help="keep the garbage collector on during timed batches"
    )
    ap.add_argument(
        "--mallopt",
        action="store_true",
        help="diagnostic: tell glibc malloc to keep freed memory (no trimming, no "
        "mmap for big blocks), taking page faults out of the step",
    )
    ap.add_argument("--no-check", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--clock",
        choices=["wall", "thread"],
        default="wall",
        help="wall time (default) or the main thread's CPU time (for 1-thread impls on a busy "
        "machine)",
    )
    a = ap.parse_args()
    if a.clock == "thread":
        global CLOCK
        CLOCK = time.thread_time

    # The library under test: from the current directory first (as `python -m`
    # would), then PYTHONPATH / site-packages.
    if sys.path[:1] != [os.getcwd()]:
        sys.path.insert(0, os.getcwd())
    try:
        import tinygrad_attn  # noqa: F401
    except ImportError as e:
        raise SystemExit(
            "cannot import tinygrad_attn (%s): run from the library's checkout "
            "or set PYTHONPATH to it" % e
        )
    if not have("torch"):
        # (changed from train_peers.py: time tinygrad_attn alone, the ratios say n/a)
        print("torch is not installed: tinygrad_attn is timed alone, without the agreement check")
        a.no_check = True

    mallopt = None
    if a.mallopt:
        mallopt = set_mallopt()
        if mallopt is None:
            raise SystemExit("--mallopt: glibc's mallopt is not available here")
    t_start = time.perf_counter()
    load0 = _loadavg()
    repeats = a.repeats or (3 if a.quick else 9)
    target = (a.target_ms or (40.0 if a.quick else 300.0)) / 1e3
    nthreads = a.threads or blas_threads()
    sizes = [parse_size(s.strip()) for s in a.sizes.split(",") if s.strip()]
    impls, skipped = build_impls(nthreads)
    if a.impls:
        keep = set(a.impls.split(","))
        unknown = keep - {i.name for i in impls}
        if not have("torch"):  # (changed from train_peers.py: torch's impls are optional)
            unknown = {n for n in unknown if not n.startswith("torch")}
        if unknown:
            raise SystemExit(
                "--impls: unknown %s (have %s)"
                % (sorted(unknown), ", ".join(i.name for i in impls))
            )
        impls = [i for i in impls if i.name in keep]
    names = [i.name for i in impls]
    rng = random.Random(a.seed)

    info = machine_info(nthreads)
    print(
        "# train_peers: one Adam training step of a small causal transformer LM%s"
        % (" (quick)" if a.quick else "")
    )
    print("cpu: %s, %s logical cpus" % (info["cpu"], info["cpu_count"]))
    print(
        "python %s, numpy %s, tinygrad_attn %s from %s (commit %s%s), %s"
        % (
            info["python"],
            info["numpy"],
            info["tinygrad_attn"],
            info["tinygrad_attn_path"],
            (info["tinygrad_attn_commit"] or "?")[:12],
            ", uncommitted changes" if info["tinygrad_attn_dirty"] else "",
            ", ".join("%s %s" % kv for kv in info["versions"].items()),
        )
    )
    print(
        "numpy BLAS: %s; OpenBLAS core selected: %s; numpy BLAS threads: %s"
        % (info["numpy_blas_build"], info["openblas_core"], nthreads)
    )
    for d in info.get("threadpoolctl", []):
        print(
            "  threadpoolctl: %s %s %s threads=%s"
            % (d.get("user_api"), d.get("internal_api"), d.get("version"), d.get("num_threads"))
        )
    if "torch_blas" in info:
        print(
            "torch: BLAS_INFO=%s, CPU capability %s, default threads %s, Adam: %s (default)"
            % (
                info["torch_blas"],
                info["torch_cpu_capability"],
                info["torch_default_threads"],
                info["torch_adam"],
            )
        )
    print("env: " + ", ".join("%s=%s" % kv for kv in info["env"].items()))
    print(
        "implementations: "
        + ", ".join(i.name + (" [%s]" % i.note if i.note else "") for i in impls)
    )
    if skipped:
        print("skipped: " + "; ".join(skipped))
    print("sizes: " + "; ".join("%s (%s)" % (lab, describe(c)) for lab, c in sizes))
    print(
        "malloc: %s"
        % (
            mallopt
            or "default settings (freed big arrays may go back to the "
            "OS and be page-faulted in again)"
        )
    )
    if load0:
        print("load average at start: %.2f %.2f %.2f" % tuple(load0))
    print(
        "timing: float32, %d interleaved rounds, ~%.0f ms per timed batch, %.2f s settle on "
        "thread-pool family switch, gc %s during batches"
        % (repeats, target * 1e3, a.settle, "on" if a.gc else "off")
    )

    # ---- correctness
    checks = []
    if not a.no_check:
        torch_impl = next(
            (i for i in impls if i.family == "torch" and i.name != "torch-1t"), None
        ) or next(i for i in build_impls(nthreads)[0] if i.family == "torch")
        print(
            "\n### agreement of tinygrad_attn and torch on the first step (same weights, "
            "same batch)"
        )
        print(
            "relative errors, tinygrad_attn vs torch (normwise per parameter: "
            "max|diff| / max|torch|)"
        )
        print(
            "| size | dtype | loss | grads, all params | worst param | params after "
            "Adam step | (noise-grad params) | loss at step 2 | tolerance |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for label, cfg in sizes:
            for dtype in ("float64", "float32"):
                rec = check_size(label, cfg, dtype, a.seed, torch_impl.ctx)
                checks.append(rec)
                print(
                    "| %s | %s | %.1e | %.1e | %.1e `%s` | %.1e | %.1e | %.1e | %g |"
                    % (
                        label,
                        dtype,
                        rec["loss_rel"],
                        rec["grad_overall_rel"],
                        rec["grad_worst_rel"],
                        rec["grad_worst_param"],
                        rec["after_step_param_rel"],
                        rec["after_step_null_param_rel"],
                        rec["step2_loss_rel"],
                        rec["tol"],
                    )
                )
        nulls = sorted({n for r in checks for n in r["null_grad_params"]})
        print(
            "PASS: loss and every gradient agree within the tolerance, gradients have the "
            "model's dtype; after the Adam step, parameters and the step-2 loss are checked "
            "in float64 (shown for float32)"
        )
        if nulls:
            worst = max(
                (v["max_abs_diff"] / r["grad_max"], r["size"], r["dtype"])
                for r in checks
                for v in r["null_grad_params"].values()
            )
            print(
                "noise-grad params, zero in exact arithmetic (softmax ignores a shift of a "
                "row of scores), rounding noise in both, checked against the largest "
                "gradient: %s; worst |diff| / max|g| = %.1e (%s %s). Adam's first step turns "
                "noise into +-lr, hence their larger float32 difference after the step"
                % (", ".join(nulls), *worst)
            )
        for r in checks:
            if r["dtype"] == "float32":
                nt, nto = sum(r["nodes_ta"].values()), sum(r["nodes_torch"].values())
                top = sorted(r["nodes_ta"].items(), key=lambda kv: -kv[1])[:6]
                print(
                    "graph ops per step at %s: tinygrad_attn %d (%s, ...), torch %d; objects "
                    "per step left to the cycle collector: tinygrad_attn %.0f, torch %.0f"
                    % (
                        r["size"],
                        nt,
                        ", ".join("%s %d" % kv for kv in top),
                        nto,
                        r["cyclic_garbage_ta"],
                        r["cyclic_garbage_torch"],
                    )
                )
        print("  checks done at %.1f s" % (time.perf_counter() - t_start), file=sys.stderr)

    # ---- timing
    res, ratios, steal, calib, rounds_info = {}, {}, {}, {}, {}
    gc.collect()
    time.sleep(a.settle)
    for label, cfg in sizes:
        batches = make_batches(cfg, a.seed + 1)
        cells = []
        for imp in impls:
            with imp.ctx():
                cells.append(Cell(imp, imp.factory(cfg, "float32", a.seed, batches).step))
        t0, meter = time.perf_counter(), LoadMeter()
        rounds_info[label] = measure(cells, repeats, target, rng, a.settle, a.gc)
        steal[label] = meter.stop()
        print(
            "  timed %s in %.1f s (at %.1f s)"
            % (label, time.perf_counter() - t0, time.perf_counter() - t_start),
            file=sys.stderr,
        )
        by = {c.impl.name: c for c in cells}
        for c in cells:
            res[(label, c.impl.name)] = dict(
                stats(c.times),
                number=c.number,
                times=c.times,
                steps_per_s=1 / statistics.median(c.times),
                minor_faults_per_step=c.faults,
                minor_faults_median=statistics.median(c.faults),
            )
            calib[(label, c.impl.name)] = c.number
        for x, y, lab in pairs_for(names, nthreads):
            per = [p / q for p, q in zip(by[x].times, by[y].times)]
            ratios[(label, x, y)] = {
                "label": lab,
                "per_round": per,
                "median": statistics.median(per),
            }
        del cells, by
        gc.collect()

    print_tables(res, ratios, names, sizes, nthreads)
    if any(steal.values()):
        print(
            "\nduring timing, share of all CPUs: steal time "
            + ", ".join("%s %.1f%%" % (k, 100 * v["steal"]) for k, v in steal.items() if v)
            + "; other processes' CPU time "
            + ", ".join("%s %.0f%%" % (k, 100 * v["others"]) for k, v in steal.items() if v)
            + " (above 0% means someone else used the cores)"
        )
    busy = {lab: sum(1 for r in rounds_info[lab] if (r["others"] or 0) > BUSY) for lab, _ in sizes}
    print(
        "rounds during which other processes used more than %.0f%% of the CPUs: %s"
        % (
            100 * BUSY,
            ", ".join("%s %d of %d" % (lab, busy[lab], len(rounds_info[lab])) for lab, _ in sizes),
        )
    )
    print(
        "timed batches: "
        + "; ".join(
            "%s: %s" % (lab, ", ".join("%s %d steps" % (n, calib[(lab, n)]) for n in names))
            for lab, _ in sizes
        )
    )

    # ---- profile
    profiles = []
    if a.profile:
        pimpl = next((i for i in impls if i.name == a.profile_impl), None)
        if pimpl is None:
            pimpl = next(i for i in build_impls(nthreads)[0] if i.name == a.profile_impl)
        main_pairs = [
            (x, y)
            for x, y, lab in pairs_for(names, nthreads)
            if x.startswith("ta") and y.startswith("torch")
        ]
        for label, cfg in sizes:
            prof = profile_ta(label, cfg, a.seed, a.profile_steps, pimpl)
            split = phase_split(label, cfg, a.seed, impls, 3, min(target, 0.3), a.settle, a.gc)
            print_phases(label, cfg, split, main_pairs)
            prof["phases"] = split
            profiles.append(prof)

    total = time.perf_counter() - t_start
    print("\ntotal wall time: %.1f s" % total)

    if a.json:
        out = {
            "info": info,
            "argv": sys.argv[1:],
            "repeats": repeats,
            "target_s": target,
            "settle_s": a.settle,
            "gc_on": a.gc,
            "mallopt": mallopt,
            "quick": a.quick,
            "nthreads": nthreads,
            "lr": LR,
            "wall_s": total,
            "load": steal,
            "loadavg_start": load0,
            "loadavg_end": _loadavg(),
            "sizes": {lab: cfg for lab, cfg in sizes},
            "impls": [{"name": i.name, "family": i.family, "note": i.note} for i in impls],
            "skipped": skipped,
            "results": [dict(size=k[0], impl=k[1], **v) for k, v in res.items()],
            "ratios": [dict(size=k[0], num=k[1], den=k[2], **v) for k, v in ratios.items()],
            "rounds": rounds_info,
            "checks": checks,
            "profiles": profiles,
        }
        d = os.path.dirname(os.path.abspath(a.json))
        os.makedirs(d, exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
        print("raw results written to %s" % a.json)


if __name__ == "__main__":
    main()
