"""Numerical gradient checks: analytic Jacobians from the engine vs central differences.

`gradcheck(fn, inputs)` runs `fn` on float64 copies of `inputs`, builds the full Jacobian of
every output element with respect to every input that requires grad twice — once by backward
passes (one per output element), once by central differences — and compares them. On failure
it raises `GradcheckError` whose message locates the error: the op that produced the output,
the input (index and name), the worst elements, and the tolerances.

This module reads the graph; nothing in the core imports it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from .function import no_grad
from .tensor import Tensor


class GradcheckError(AssertionError):
    """The analytic gradient disagrees with central differences (see the message)."""


@dataclass
class Mismatch:
    """One input whose analytic and numerical Jacobians disagree."""

    input_index: int
    input_name: str | None
    input_shape: tuple
    output_shape: tuple
    analytic: np.ndarray  # (output elements, input elements)
    numeric: np.ndarray  # (output elements, input elements)
    failed: np.ndarray  # bool, same shape


def _as_float64_leaf(value: Any, index: int) -> Any:
    if not isinstance(value, Tensor):
        return value
    if value.dtype.kind != "f":
        return value
    if value.dtype != np.float64 and value.requires_grad:
        warnings.warn(
            f"gradcheck: input {index} ({value.name or 'unnamed'}) is {value.dtype}; checking a "
            "float64 copy instead (central differences in float32 are too coarse to compare). "
            "Pass float64 inputs to silence this.",
            UserWarning,
            stacklevel=3,
        )
    copy = Tensor(value.data, dtype=np.float64, requires_grad=value.requires_grad)
    copy.name = value.name
    return copy


def _outputs(result: Any) -> tuple:
    results = result if isinstance(result, (tuple, list)) else (result,)
    for out in results:
        if not isinstance(out, Tensor):
            raise TypeError(f"gradcheck: fn must return Tensors, got {type(out).__name__}")
    return tuple(results)


def numerical_jacobian(fn: Callable, inputs: list, index: int, eps: float) -> list:
    """Central differences d(each output)/d(inputs[index]): one (out size, in size) array per
    output."""
    x = inputs[index].data
    columns: list = []
    with no_grad():
        for flat in range(x.size):
            position = np.unravel_index(flat, x.shape)
            original = x[position]
            x[position] = original + eps
            plus = [o.data.astype(np.float64).ravel() for o in _outputs(fn(*inputs))]
            x[position] = original - eps
            minus = [o.data.astype(np.float64).ravel() for o in _outputs(fn(*inputs))]
            x[position] = original
            columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    n_out = len(columns[0]) if columns else 0
    return [
        np.stack([c[o] for c in columns], axis=1) if columns else np.zeros((0, 0))
        for o in range(n_out)
    ]


def analytic_jacobian(outputs: tuple, wrt: list) -> list:
    """For each output, for each tensor in `wrt`: the (out size, in size) Jacobian from
    backward passes, one per output element."""
    jacobians = []
    for o, out in enumerate(outputs):
        per_input = [np.zeros((out.data.size, t.data.size)) for t in wrt]
        for flat in range(out.data.size):
            for t in wrt:
                t.grad = None
            seed = np.zeros(out.shape, dtype=out.dtype)
            seed[np.unravel_index(flat, out.shape)] = 1
            last = o == len(outputs) - 1 and flat == out.data.size - 1
            out.backward(seed, retain_graph=not last)
            for i, t in enumerate(wrt):
                if t._grad is not None:
                    per_input[i][flat] = t._grad.ravel()
        jacobians.append(per_input)
    return jacobians


def _check_outputs_require_grad(fn: Callable, inputs: list) -> None:
    # A function of its own, so the trial graph is dropped (and its arrays unlocked) on return.
    for out in _outputs(fn(*inputs)):
        if not out.requires_grad:
            raise ValueError(
                f"gradcheck: fn returned an output of shape {out.shape} that does not depend on "
                "any input that requires grad (did fn run under no_grad, or detach?)"
            )


def _producer(out: Tensor) -> str:
    return out.grad_fn.name if out.grad_fn is not None else "a leaf (no op)"


def format_mismatch(m: Mismatch, op: str, atol: float, rtol: float, worst: int = 5) -> str:
    """The report for one failing input: where, how badly, and the tolerances."""
    error = np.abs(m.analytic - m.numeric)
    relative = error / np.maximum(np.abs(m.numeric), 1e-12)
    order = np.argsort(-np.where(m.failed, error, -1), axis=None)[: min(worst, m.failed.sum())]
    label = f"input {m.input_index}" + (f" ({m.input_name!r})" if m.input_name else "")
    lines = [
        f"gradcheck failed: the gradient of the output of {op} with respect to {label}, "
        f"shape {m.input_shape}, disagrees with central differences at "
        f"{int(m.failed.sum())} of {m.failed.size} Jacobian entries.",
        f"  tolerances: |analytic - numeric| <= atol + rtol * |numeric| with atol={atol:g}, "
        f"rtol={rtol:g}",
        "  worst entries (output index, input index): analytic vs numeric, abs err, rel err",
    ]
    for flat in order:
        row, col = np.unravel_index(flat, m.failed.shape)
        out_idx = tuple(int(i) for i in np.unravel_index(row, m.output_shape))
        in_idx = tuple(int(i) for i in np.unravel_index(col, m.input_shape))
        lines.append(
            f"    out{list(out_idx)}, in{list(in_idx)}: {m.analytic[row, col]:.6g} vs "
            f"{m.numeric[row, col]:.6g}, abs {error[row, col]:.3g}, rel {relative[row, col]:.3g}"
        )
    return "\n".join(lines)


def gradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any] | Tensor,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check the analytic gradients of `fn(*inputs)` against central differences.

    Every input Tensor that requires grad is checked, for every output element, on a float64
    copy (float32 inputs are copied with a warning). Returns True when all agree; otherwise
    raises `GradcheckError` naming the op, the input and the worst elements (or returns False
    with `raise_exception=False`).
    """
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = [_as_float64_leaf(v, i) for i, v in enumerate(inputs)]
    checked = [i for i, v in enumerate(inputs) if isinstance(v, Tensor) and v.requires_grad]
    if not checked:
        raise ValueError(
            "gradcheck: no input requires grad, so there is nothing to check. Pass at least "
            "one Tensor created with requires_grad=True."
        )
    _check_outputs_require_grad(fn, inputs)
    # Differences first: the inputs are perturbed in place, which a live graph (holding them
    # read-only for backward) would refuse.
    numeric = {i: numerical_jacobian(fn, inputs, i, eps) for i in checked}
    outputs = _outputs(fn(*inputs))
    analytic = analytic_jacobian(outputs, [inputs[i] for i in checked])

    reports = []
    for o, out in enumerate(outputs):
        for position, i in enumerate(checked):
            a, n = analytic[o][position], numeric[i][o]
            failed = ~(np.abs(a - n) <= atol + rtol * np.abs(n))
            if failed.any():
                m = Mismatch(i, inputs[i].name, inputs[i].shape, out.shape, a, n, failed)
                reports.append(format_mismatch(m, _producer(out), atol, rtol))
    if not reports:
        return True
    if raise_exception:
        raise GradcheckError("\n".join(reports))
    return False
