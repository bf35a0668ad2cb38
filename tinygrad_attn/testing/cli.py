"""`python -m tinygrad_attn gradcheck [OP ...]`: every op of the op tables through gradcheck.

Each registered op's hand-picked cases are checked in float64 (the forward against NumPy, then
the gradients against central differences, then the second derivatives: the gradient of the
gradient, against central differences of the gradient) and summed up in one table row per op.
`main(argv)` gets the arguments after `gradcheck`; `tinygrad_attn/__main__.py` only dispatches here.

This module runs checks and prints; it must not change any op or the tables.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..autograd.gradcheck import compare_jacobians, compare_second_order
from ..higher_order import OnceDifferentiable
from . import op_tables


@dataclass
class _OpRow:
    name: str
    cases: int = 0
    failed: int = 0
    max_abs: float = 0.0
    max_rel: float = 0.0
    max_rel_2: float | None = 0.0  # (the second derivatives'; None: a NumPy-backward user op)
    reports: list = field(default_factory=list)


def _check_sample(sample: Any, row: _OpRow) -> None:
    """Gradcheck one op-table sample (and its forward against NumPy) into `row`."""
    try:
        out = sample.call(*sample.inputs())
        expected = sample.reference()
        if out.shape != expected.shape or not np.allclose(out._data, expected, 1e-7, 1e-10):
            row.failed += 1
            row.reports.append(
                f"{sample.id}: the forward disagrees with the NumPy reference (shape "
                f"{out.shape} vs {expected.shape})"
            )
            return
        if not sample.differentiable:
            return
        options = sample.spec.gradcheck_options
        result = compare_jacobians(sample.call, sample.inputs(), **options)
        second = None if not result.passed else _second_order(sample, options, row)
    except Exception as err:  # a crash is a failure of this op, reported, not a CLI crash
        row.failed += 1
        row.reports.append(f"{sample.id}: {type(err).__name__}: {err}")
        return
    row.max_abs = max(row.max_abs, result.max_abs_error)
    row.max_rel = max(row.max_rel, result.max_rel_error)
    if not result.passed:
        row.failed += 1
        row.reports.append(f"{sample.id}:\n{result.report}")
    elif second is not None and not second.passed:
        row.failed += 1
        row.reports.append(f"{sample.id} (second derivatives):\n{second.report}")


def _second_order(sample: Any, options: dict, row: _OpRow) -> Any:
    """The second derivatives' comparison, or None for a user's op whose backward is NumPy
    code (once differentiable by design: its column reads 'n/a')."""
    try:
        second = compare_second_order(sample.call, sample.inputs(), **options)
    except OnceDifferentiable:
        row.max_rel_2 = None
        return None
    if row.max_rel_2 is not None:
        row.max_rel_2 = max(row.max_rel_2, second.max_rel_error)
    return second


def main(argv: list[str]) -> int:
    """`python -m tinygrad_attn gradcheck [OP ...]`: gradcheck every registered op (or the
    named ones; names are case-insensitive and may be globs such as 'F.*') on its hand-picked
    cases, print a table, and return 0 when all pass, 1 on a failure, 2 for an unknown name.
    `argv` holds the arguments after `gradcheck`."""
    parser = argparse.ArgumentParser(
        prog="python -m tinygrad_attn gradcheck",
        description="Check every op's first and second derivatives against central "
        "differences (float64).",
    )
    parser.add_argument("ops", nargs="*", metavar="OP", help="op names or globs (default: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed for the input values")
    parser.add_argument("--list", action="store_true", help="list the registered ops and exit")
    args = parser.parse_args(argv)
    if args.list:
        for spec in op_tables.specs():
            print(f"{spec.name:<28} {len(spec.cases):>3} cases  {spec.where}")
        return 0
    try:
        specs = op_tables.select(args.ops)
    except KeyError as err:
        print(
            f"gradcheck: unknown op {err.args[0]}. Registered ops: " + ", ".join(op_tables.names()),
            file=sys.stderr,
        )
        return 2

    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    rows = []
    for spec in specs:
        row = _OpRow(spec.name)
        for sample in spec.samples(rng):
            row.cases += 1
            _check_sample(sample, row)
        rows.append(row)
    seconds = time.perf_counter() - start

    width = max(len("op"), *(len(r.name) for r in rows))
    head = f"{'op':<{width}}  {'cases':>5}  {'max abs err':>11}  {'max rel err':>11}"
    print(f"{head}  {'2nd rel err':>11}  result")
    for r in rows:
        result = "ok" if not r.failed else f"FAIL ({r.failed})"
        second = "n/a" if r.max_rel_2 is None else f"{r.max_rel_2:.2e}"
        errors = f"{r.max_abs:>11.2e}  {r.max_rel:>11.2e}  {second:>11}"
        print(f"{r.name:<{width}}  {r.cases:>5}  {errors}  {result}")
    failed = [r for r in rows if r.failed]
    cases = sum(r.cases for r in rows)
    if not failed:
        print(f"all {len(rows)} ops passed ({cases} cases, float64, {seconds:.1f} s)")
        return 0
    print(f"{len(failed)} of {len(rows)} ops FAILED ({cases} cases, {seconds:.1f} s)\n")
    for r in failed:
        print(r.reports[0])
        if len(r.reports) > 1:
            print(f"... and {len(r.reports) - 1} more failing case(s) of {r.name}\n")
    return 1
