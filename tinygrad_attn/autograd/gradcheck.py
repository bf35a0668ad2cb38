"""Numerical gradient checks: analytic Jacobians from the engine vs central differences.

`gradcheck(fn, inputs)` runs `fn` on float64 copies of `inputs`, builds the full Jacobian of
every output element with respect to every input that requires grad twice — once by backward
passes (one per output element), once by central differences — and compares them. On failure
it raises `GradcheckError` whose message locates the error: the op that produced the output,
the input (index and name), the worst elements, the tolerances, the block of the Jacobian that
failed, and — when the pattern of the error points at a classic mistake in a backward (a
constant factor, a transpose, a flipped sign, a missing broadcast sum or accumulation, a zero
gradient) — a hint naming it.

`gradgradcheck(fn, inputs)` checks the second derivatives the same way: the gradient of `fn`,
taken with `create_graph=True` (a function of the inputs and of the upstream gradient), is
itself checked against central differences. The command line that runs every op of the op
tables through these checks (`python -m tinygrad_attn gradcheck`) lives in `testing/cli.py`.

This module reads the graph; nothing in the core imports it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..state import enable_grad, no_grad
from ..tensor import Tensor


class GradcheckError(AssertionError):
    """The analytic gradient disagrees with central differences (see the message).

    `mismatches` holds one `Mismatch` per failing (output, input) pair, with both Jacobians."""

    def __init__(self, message: str, mismatches: Sequence[Mismatch] = ()) -> None:
        super().__init__(message)
        self.mismatches = list(mismatches)


@dataclass
class Mismatch:
    """One input whose analytic and numerical Jacobians disagree (for one output)."""

    input_index: int
    input_name: str | None
    input_shape: tuple
    output_shape: tuple
    analytic: np.ndarray  # (output elements, input elements)
    numeric: np.ndarray  # (output elements, input elements)
    failed: np.ndarray  # bool, same shape
    op: str = "?"
    output_index: int = 0
    input_data: np.ndarray | None = None
    eps: float = 1e-6
    hint: str | None = None


@dataclass
class GradcheckResult:
    """Everything one check measured: pass/fail, the worst errors, and the failures.

    `max_rel_error` is taken over the entries whose numeric value exceeds atol (elsewhere a
    relative error measures rounding noise, not the gradient)."""

    passed: bool
    max_abs_error: float
    max_rel_error: float
    atol: float
    rtol: float
    mismatches: list = field(default_factory=list)

    @property
    def report(self) -> str:
        """The full failure message ('' when the check passed)."""
        return "\n".join(format_mismatch(m, m.op, self.atol, self.rtol) for m in self.mismatches)


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
            stacklevel=4,
        )
    copy = Tensor(value._data, dtype=np.float64, requires_grad=value.requires_grad)
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
    # Perturb a private copy: the caller's array may be read-only while some graph still holds
    # it (a module that keeps its last output, a trial graph), and must not be written anyway.
    x = inputs[index].data = inputs[index]._data.copy()
    columns: list = []
    with no_grad():
        for flat in range(x.size):
            position = np.unravel_index(flat, x.shape)
            original = x[position]
            x[position] = original + eps
            plus = [o._data.astype(np.float64).ravel() for o in _outputs(fn(*inputs))]
            x[position] = original - eps
            minus = [o._data.astype(np.float64).ravel() for o in _outputs(fn(*inputs))]
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
        per_input = [np.zeros((out._data.size, t._data.size)) for t in wrt]
        for flat in range(out._data.size):
            for t in wrt:
                t.grad = None
            seed = np.zeros(out.shape, dtype=out.dtype)
            seed[np.unravel_index(flat, out.shape)] = 1
            last = o == len(outputs) - 1 and flat == out._data.size - 1
            out.backward(seed, retain_graph=not last)
            for i, t in enumerate(wrt):
                if t._grad is not None:
                    per_input[i][flat] = t._grad._data.ravel()
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


# ------------------------------------------------------------------------------- hints


def _close(x: np.ndarray, y: np.ndarray, atol: float, rtol: float) -> bool:
    return bool(np.all(np.abs(x - y) <= atol + rtol * np.abs(y)))


def _swap_last_two(size_shape: tuple) -> np.ndarray | None:
    """Flat positions of an array of `size_shape` with its last two axes swapped (square
    last two axes only: otherwise a transposed gradient would have the wrong shape)."""
    if len(size_shape) < 2 or size_shape[-1] != size_shape[-2] or size_shape[-1] < 2:
        return None
    return np.arange(int(np.prod(size_shape))).reshape(size_shape).swapaxes(-1, -2).ravel()


def _broadcast_copies(input_shape: tuple, output_shape: tuple) -> int:
    """How many times broadcasting repeats each input element in the output (1 if it does
    not broadcast to the output at all)."""
    try:
        if np.broadcast_shapes(input_shape, output_shape) != tuple(output_shape):
            return 1
    except ValueError:
        return 1
    return max(1, int(np.prod(output_shape)) // max(1, int(np.prod(input_shape))))


def _at_kink(m: Mismatch) -> bool:
    """True when every failing input element sits on 0 or ties with another element, where
    the function has a kink and central differences measure a one-sided average."""
    if m.input_data is None:
        return False
    values = np.asarray(m.input_data, dtype=np.float64).ravel()
    columns = np.unique(np.nonzero(m.failed)[1])
    near = 10 * m.eps
    for c in columns:
        others = np.delete(values, c)
        if abs(values[c]) > near and not np.any(np.abs(others - values[c]) <= near):
            return False
    return columns.size > 0


def diagnose(m: Mismatch, atol: float, rtol: float) -> str | None:
    """Name the likely bug behind a mismatch from the pattern of its error, or None.

    Tried in order: non-finite values, a kink at the input, a zero gradient, a flipped sign,
    a constant factor, a transposed gradient (input or output axes), and contributions
    missing from elements that feed several outputs (a broadcast sum or an accumulation)."""
    a, n = m.analytic, m.numeric
    if not np.all(np.isfinite(n)):
        return (
            "central differences are not finite: fn is undefined (NaN or Inf) within eps of "
            "this input. Choose inputs inside the op's domain (e.g. positive values for log)."
        )
    if not np.all(np.isfinite(a)):
        return (
            "backward produced NaN or Inf for this input (a division by zero or log(0) in "
            "backward?); run it under ta.detect_anomaly() to see where."
        )
    if _at_kink(m):
        return (
            "the failing input elements are 0, or equal (within 10 * eps) to another element. "
            "If the op has a kink there (relu, abs, tied maxima) it has no derivative and "
            "central differences average the two one-sided slopes; if it is smooth but steep "
            "there (a layer norm of nearly equal values) the step eps is too coarse. Move the "
            "inputs apart; this is probably not a bug in backward."
        )
    if np.all(np.abs(a) <= atol):
        return (
            "zero gradient: backward returned None or zeros for this input, but the output "
            "depends on it. Does backward return a gradient for every input, in forward's "
            "argument order?"
        )
    if _close(-a, n, atol, rtol):
        return "sign flipped: the analytic gradient is exactly minus the numeric one."
    scale = float(np.sum(a * n) / max(float(np.sum(n * n)), 1e-300))
    if abs(scale - 1) > rtol and _close(a, scale * n, atol, rtol):
        copies = _broadcast_copies(m.input_shape, m.output_shape)
        because = (
            f" 1/{copies} is one over the number of broadcast copies of each element: the "
            "gradient was averaged over the broadcast axes instead of summed."
            if copies > 1 and abs(scale * copies - 1) <= rtol
            else " A constant is missing or extra in backward: the 2 of d(x**2) = 2x, the 1/N "
            "of a mean, the scale of attention?"
        )
        return (
            f"constant factor: the analytic gradient is {scale:.6g} times the numeric one "
            "everywhere." + because
        )
    swap_in = _swap_last_two(tuple(m.input_shape))
    if swap_in is not None and _close(a[:, swap_in], n, atol, rtol):
        return (
            "transposed gradient: the analytic gradient equals the numeric one with the "
            "input's last two axes swapped; backward returned the transpose of the right "
            "gradient (e.g. b @ dout.T instead of dout @ b.T)."
        )
    swap_out = _swap_last_two(tuple(m.output_shape))
    if swap_out is not None and _close(a[swap_out, :], n, atol, rtol):
        return (
            "transposed gradient: the analytic gradient equals the numeric one with the "
            "output's last two axes swapped; backward used dout transposed (or reduced over "
            "the wrong axis)."
        )
    missing = m.failed & (np.abs(a) <= atol)
    fan_out = (np.abs(n) > atol).sum(axis=0)  # outputs that each input element feeds
    if np.array_equal(missing, m.failed) and np.all(fan_out[np.nonzero(m.failed)[1]] >= 2):
        if _broadcast_copies(m.input_shape, m.output_shape) > 1:
            return (
                "missing broadcast sum: this input is broadcast to the output, and its gradient "
                "lacks the contributions of some broadcast copies. Return the gradient in the "
                "output's shape (the engine sums it over the broadcast axes) or sum it over "
                "every broadcast axis; do not keep one slice such as dout[0]."
            )
        return (
            "missing accumulation: input elements that several output elements read (e.g. a "
            "repeated index) received the gradient of only one of them: backward overwrote "
            "instead of adding up. grad[idx] += dout keeps one value per repeated idx; use "
            "np.add.at(grad, idx, dout)."
        )
    return None


# ----------------------------------------------------------------------------- reports


def _index_text(flat: int, shape: tuple) -> str:
    return ",".join(str(int(i)) for i in np.unravel_index(flat, shape)) if shape else ""


def format_jacobian_block(m: Mismatch, max_rows: int = 6, max_cols: int = 6) -> str:
    """The failing block of both Jacobians, side by side: all of it when it is small,
    otherwise the rows and columns with the largest errors. Failing entries end in '*'."""
    n_out, n_in = m.failed.shape
    if n_out <= max_rows and n_in <= max_cols:
        rows, cols = np.arange(n_out), np.arange(n_in)
        title = f"the full {n_out} x {n_in} Jacobian"
    else:
        error = np.where(m.failed, np.abs(m.analytic - m.numeric), 0.0)
        rows = np.sort(np.argsort(-error.max(axis=1), kind="stable")[:max_rows])
        cols = np.sort(np.argsort(-error.max(axis=0), kind="stable")[:max_cols])
        title = f"the rows and columns with the largest errors of the {n_out} x {n_in} Jacobian"
    row_labels = [f"out[{_index_text(r, m.output_shape)}]" for r in rows]
    col_labels = [f"in[{_index_text(c, m.input_shape)}]" for c in cols]
    left = max(len(label) for label in row_labels) + 6
    width = max(11, *(len(label) + 1 for label in col_labels))
    lines = [
        f"  Jacobian block, rows: output elements, columns: input elements ({title}; "
        "failing entries end in *):",
        " " * left + "".join(label.rjust(width) for label in col_labels),
    ]
    for title_row, matrix in (("analytic", m.analytic), ("numeric", m.numeric)):
        lines.append(f"    {title_row}")
        for r, label in zip(rows, row_labels):
            cells = "".join(
                (f"{matrix[r, c] + 0.0:.4g}" + ("*" if m.failed[r, c] else " ")).rjust(width)
                for c in cols
            )
            lines.append((f"      {label}".ljust(left) + cells).rstrip())
    return "\n".join(lines)


def format_mismatch(m: Mismatch, op: str, atol: float, rtol: float, worst: int = 5) -> str:
    """The report for one failing input: where, how badly, the tolerances, the failing block
    of the Jacobian and (when the error has a recognisable pattern) a hint."""
    error = np.abs(m.analytic - m.numeric)
    relative = error / np.maximum(np.abs(m.numeric), 1e-12)
    order = np.argsort(-np.where(m.failed, error, -1), axis=None)[: min(worst, m.failed.sum())]
    label = f"input {m.input_index}" + (f" ({m.input_name!r})" if m.input_name else "")
    output = f"output {m.output_index} of {op}" if m.output_index else f"the output of {op}"
    lines = [
        f"gradcheck failed: the gradient of {output} with respect to {label}, "
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
    lines.append(format_jacobian_block(m))
    if m.hint:
        lines.append(f"  hint: {m.hint}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ checks


def compare_jacobians(
    fn: Callable[..., Any],
    inputs: Sequence[Any] | Tensor,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
) -> GradcheckResult:
    """The measurement behind `gradcheck`, without raising: both Jacobians of `fn(*inputs)`
    for every input that requires grad (checked on float64 copies), compared entry by entry."""
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

    mismatches = []
    max_abs = max_rel = 0.0
    for o, out in enumerate(outputs):
        for position, i in enumerate(checked):
            a, n = analytic[o][position], numeric[i][o]
            error = np.abs(a - n)
            error[np.isnan(error)] = np.inf  # a NaN on either side is the worst error there is
            significant = np.abs(n) > atol
            if error.size:
                max_abs = max(max_abs, float(error.max()))
            if significant.any():
                max_rel = max(max_rel, float(np.max(error[significant] / np.abs(n[significant]))))
            failed = ~(error <= atol + rtol * np.abs(n))
            if failed.any():
                m = Mismatch(
                    i,
                    inputs[i].name,
                    inputs[i].shape,
                    out.shape,
                    a,
                    n,
                    failed,
                    op=_producer(out),
                    output_index=o,
                    input_data=inputs[i]._data.copy(),
                    eps=eps,
                )
                m.hint = diagnose(m, atol, rtol)
                mismatches.append(m)
    return GradcheckResult(not mismatches, max_abs, max_rel, atol, rtol, mismatches)


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
    raises `GradcheckError` naming the op, the input, the worst elements and the failing
    Jacobian block, with a hint when the error looks like a classic backward bug (or returns
    False with `raise_exception=False`).
    """
    result = compare_jacobians(fn, inputs, eps=eps, atol=atol, rtol=rtol)
    if result.passed:
        return True
    if raise_exception:
        raise GradcheckError(result.report, result.mismatches)
    return False


def _first_derivative(func: Callable, inputs: list, grad_outputs: list) -> tuple:
    """(fn, all inputs) where fn(*inputs, *grad_outputs) is the gradient of `func` with respect
    to its inputs that require grad, taken with create_graph=True (so it can be checked)."""
    from . import grad

    count = len(inputs)
    positions = [i for i, v in enumerate(inputs) if isinstance(v, Tensor) and v.requires_grad]

    def first_derivative(*values: Any) -> tuple:
        xs, gs = list(values[:count]), list(values[count:])
        wanted = [xs[i] for i in positions]
        with enable_grad():  # (central differences run it under no_grad: it needs a graph)
            outs = _outputs(func(*xs))
            found = grad(outs, wanted, gs, create_graph=True, allow_unused=True)
            zeros = [x * 0 for x in wanted]  # (a gradient that is 0 everywhere, as a function)
            return tuple(z if g is None else g if g.requires_grad else g + z
                         for g, z in zip(found, zeros))  # fmt: skip

    return first_derivative, [*inputs, *grad_outputs]


def _second_order_inputs(func: Callable, inputs: Any, grad_outputs: Any, seed: int) -> tuple:
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = [_as_float64_leaf(v, i) for i, v in enumerate(inputs)]
    outputs = _outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = [
            Tensor(rng.standard_normal(o.shape), dtype=np.float64, requires_grad=True)
            for o in outputs
        ]
    else:
        given = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        grad_outputs = [_as_float64_leaf(g, len(inputs) + i) for i, g in enumerate(given)]
    return inputs, grad_outputs, _producer(outputs[0])


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Sequence[Any] | Tensor,
    grad_outputs: Sequence[Any] | Tensor | None = None,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    seed: int = 0,
) -> bool:
    """Check the second derivatives of `func(*inputs)` against central differences, as
    PyTorch's gradgradcheck: the first derivative `autograd.grad(func(*x), x, g,
    create_graph=True)` is a function of the inputs x and of the upstream gradient g (random
    unless `grad_outputs` is given), and `gradcheck` checks it. A failure names the op whose
    gradient's gradient is wrong, the input and the elements."""
    inputs, grad_outputs, op = _second_order_inputs(func, inputs, grad_outputs, seed)
    fn, values = _first_derivative(func, inputs, grad_outputs)
    result = compare_jacobians(fn, values, eps, atol, rtol)
    if result.passed:
        return True
    if raise_exception:
        raise GradcheckError(
            f"gradgradcheck of {op}: the second derivative (the gradient of its gradient) "
            "disagrees with central differences of the gradient.\n" + result.report,
            result.mismatches,
        )
    return False


def compare_second_order(
    func: Callable[..., Any],
    inputs: Sequence[Any] | Tensor,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> GradcheckResult:
    """The measurement behind the op table's second-order check: `gradgradcheck`'s comparison,
    without raising, leaving out the entries where the first derivative jumps (a kink of
    relu, a tie of max): there central differences of the gradient grow as the step shrinks,
    which a second look at a tenth of the step shows, and no second derivative exists."""
    inputs, grad_outputs, _ = _second_order_inputs(func, inputs, None, seed)
    fn, values = _first_derivative(func, inputs, grad_outputs)
    result = compare_jacobians(fn, values, eps, atol, rtol)
    if result.passed:
        return result
    kept = []
    for m in result.mismatches:
        finer = numerical_jacobian(fn, list(values), m.input_index, eps / 10)[m.output_index]
        jump = np.abs(finer - m.numeric) > 0.5 * np.abs(m.numeric)  # (x10 where it jumps)
        m.failed &= ~(jump & (np.abs(m.numeric) > 1e3 * max(1.0, float(np.abs(m.analytic).max()))))
        if m.failed.any():
            kept.append(m)
    result.mismatches, result.passed = kept, not kept
    return result
