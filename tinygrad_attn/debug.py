"""Debugging aids that read the graph: step explanations, anomaly mode, creation sites, tracing.

- `explain_step(step)`: what one `BackwardStep` did, in several lines (`step.explain()`).
- `detect_anomaly()`: while active, every op records where the user's code created it, and the
  first NaN/Inf in a forward result or a backward gradient raises `AnomalyError` naming the op,
  the pass, the input or output, and that creation site. Saved arrays are checksummed, so one
  written straight into its ndarray (`t.numpy()[0] = 1`, which no version counter sees) is
  caught at backward, naming its op.
- `TINYGRAD_ATTN_DEBUG=1` (read once, at import, for the main thread) prints each op to stderr
  as it runs, forward and backward, with shapes; `=2` adds value statistics.
  `set_op_logging(level)` / `with log_ops(level):` do the same from code.

Everything here plugs into `state.observers` (per thread); nothing in the core imports this
module, and it must never change what the engine computes — only watch it and explain it.
"""

from __future__ import annotations

import functools
import inspect
import linecache
import os
import re
import sys
import threading
import warnings
import weakref
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from . import format as _format
from .state import observers, set_step_explainer
from .tensor import Tensor


class AnomalyError(RuntimeError):
    """A NaN or Inf appeared in a forward result or a backward gradient under detect_anomaly()."""


# ------------------------------------------------------------------------ creation sites
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_inside_package: dict[str, bool] = {}


def _is_library_file(filename: str) -> bool:
    known = _inside_package.get(filename)
    if known is None:
        known = os.path.abspath(filename).startswith(_PACKAGE_DIR)
        _inside_package[filename] = known
    return known


_short_paths: dict[tuple[str, str], str] = {}


def _short_path(filename: str) -> str:
    """Relative to the working directory when below it (what a person types), else as is."""
    key = (filename, os.getcwd())
    short = _short_paths.get(key)
    if short is None:
        try:
            relative = os.path.relpath(filename)
        except ValueError:  # another drive on Windows
            relative = ".."
        short = _short_paths[key] = filename if relative.startswith("..") else relative
    return short


def user_site() -> str | None:
    """`file:line in function` of the innermost frame outside the tinygrad_attn package.

    Tests and demos count as user code; so does anything else that is not this library."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if not _is_library_file(code.co_filename):
            return f"{_short_path(code.co_filename)}:{frame.f_lineno} in {code.co_name}"
        frame = frame.f_back
    return None


_SITE = re.compile(r"^(?P<file>.*):(?P<line>\d+)(?: in (?P<function>.*))?$")


def _site_with_source(site: str | None) -> str:
    """The site and, on the next line, its line of code (what the user wrote there)."""
    if site is None:
        return "unknown (it was not created inside detect_anomaly() or a trace)"
    match = _SITE.match(site)
    if match is None:
        return site
    code = linecache.getline(match["file"], int(match["line"])).strip()
    return f"{site}\n      {code}" if code else site


class _SiteRecording:
    """Counted switch for recording creation sites (anomaly mode and op logging share it), per
    thread: the first user installs `user_site` as the finder, the last puts the old one back."""

    previous_finder: Callable[[], str | None] | None = None

    @staticmethod
    def start() -> None:
        if observers.record_sites == 0:
            _SiteRecording.previous_finder = observers.site_finder
            observers.site_finder = user_site
        observers.record_sites += 1
        observers.update()

    @staticmethod
    def stop() -> None:
        observers.record_sites -= 1
        if observers.record_sites == 0:
            observers.site_finder = _SiteRecording.previous_finder or observers.site_finder
        observers.update()


def formula(node: Any) -> str:
    """The op's own docstring (`out = ...;  da = ...`): the calculus its backward applies."""
    doc = type(node).__dict__.get("__doc__")
    if not doc:
        return (
            f"({type(node).__name__} has no docstring; give the class a one-line docstring "
            "such as 'out = f(a);  da = dout * df/da' and it will show here)"
        )
    return inspect.cleandoc(doc)


def _params(node: Any) -> str:
    """The op's non-array attributes (`axis=1`, `scale=0.5`): what its backward reads besides
    the saved arrays."""
    shown = []
    for key, value in node.params().items():
        if isinstance(value, np.ndarray):
            continue
        text = repr(value)
        shown.append(f"{key}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(shown)


def explain_step(step: Any) -> str:
    """Several lines about one backward step: the op and where it was made, the formula its
    backward applied, its output, the gradient that arrived, and each input's gradient."""
    node = step.node
    lines = [f"step {step.index}: {step.op}.backward"]
    if _format.in_place(node):
        lines[0] += f"  (recorded in place: {node.inplace})"
    if node.creation_site or node.scope:
        where = f"created at {node.creation_site}" if node.creation_site else ""
        scope = f"in module {node.scope}" if node.scope else ""
        lines.append("  " + ", ".join(part for part in (where, scope) if part))
    pad = " " * 12
    lines.append("  formula   " + formula(node).replace("\n", "\n" + pad))
    params = _params(node)
    if params:
        lines.append(f"  params    {params}")
    out = step.output
    lines.append(f"  output    {_format.label(out)}")
    lines.append("  grad_out  " + _format.describe(step.grad_output, pad))
    needs = getattr(node, "needs_input_grad", (True,) * len(step.inputs))
    for i, (t, grad) in enumerate(zip(step.inputs, step.grad_inputs)):
        lines.append(f"  input {i}   {_format.label(t)}, {_format.origin(t, needs[i])}")
        if grad is None:
            why = "no gradient: it does not require grad" if not needs[i] else "no gradient"
            lines.append(f"    grad    ({why})")
            continue
        lines.append(f"    grad    {_format.describe(grad, pad)}")
        if isinstance(t, Tensor) and t.grad_fn is None and t._grad is not None:
            lines.append(f"    .grad   so far: {_format.stats(t._grad._data)}")
    return "\n".join(lines)


set_step_explainer(explain_step)  # what BackwardStep.explain() calls (the engine imports no tool)


# ------------------------------------------------------------------------- anomaly mode
# Ops that write a caller-chosen value rather than compute one: an Inf they output (the -inf
# of an attention mask) was asked for. A NaN is still an anomaly.
_FILL_OPS = {"MaskedFill"}

_FORWARD_CAUSES = {
    "Log": "log of a negative number is NaN and log(0) is -inf",
    "Sqrt": "sqrt of a negative number is NaN",
    "Div": "0/0 is NaN and x/0 is inf",
    "Pow": "a negative base to a fractional power is NaN; 0 to a negative power is inf",
    "Exp": "exp overflows to inf above ~709 in float64 (~88 in float32); subtract the max first",
    "Softmax": "a row whose entries are all -inf (every key masked) has no softmax",
    "LogSoftmax": "a row whose entries are all -inf (every key masked) has no log-softmax",
    "Mul": "0 * inf is NaN",
    "Sub": "inf - inf is NaN",
    "Add": "inf + (-inf) is NaN",
}
_BACKWARD_CAUSES = {
    "Sqrt": "da = dout / (2 sqrt(a)) is infinite where a = 0",
    "Log": "da = dout / a is infinite where a = 0",
    "Div": "the gradient divides by b (and by b**2 for db)",
    "Pow": "a**(b-1) is infinite at a = 0 when b < 1; db needs log(a), NaN for a <= 0",
}


# Ops whose Inf from finite inputs is exact, not an overflow (x/0, log 0, 0 to a negative power).
_EXACT_INF = {"Div", "Log", "Pow"}


def _forward_cause(op: str, nan: int, dtype: np.dtype) -> str:
    if nan == 0 and op not in _EXACT_INF and dtype.kind == "f":
        return (
            f"the result overflowed: its magnitude went past {np.finfo(dtype).max:.3g}, the "
            f"largest {dtype} number (scale the inputs down, or compute in a safer order)"
        )
    return _FORWARD_CAUSES.get(
        op, "look in its forward for 0/0, inf - inf, 0 * inf, or log or sqrt of a negative"
    )


def _count_bad(a: np.ndarray) -> tuple[int, int, tuple]:
    """(NaN count, Inf count, index of the first non-finite element)."""
    bad = ~np.isfinite(a)
    nan = int(np.isnan(a).sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if bad.any() else ()
    return nan, int(bad.sum()) - nan, first


def _what(nan: int, inf: int) -> str:
    return "NaN" if inf == 0 else "Inf" if nan == 0 else "NaN and Inf"


def _is_checked(a: Any) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind in "fc"


def _inputs_holding(inputs: tuple, test: Callable) -> list:
    return [(i, t) for i, t in enumerate(inputs) if _is_checked(t._data) and test(t._data).any()]


def _input_names(found: list) -> str:
    return ", ".join(f"input {i}" + (f" {t.name!r}" if t.name else "") for i, t in found)


def _anomaly_forward(node: Any, inputs: tuple, out: Tensor) -> None:
    data = out._data
    if not _is_checked(data) or np.isfinite(data).all():
        return
    nan, inf, first = _count_bad(data)
    with_nan = _inputs_holding(inputs, np.isnan)
    with_inf = _inputs_holding(inputs, np.isinf)
    if nan == 0 and (with_nan or with_inf or node.name in _FILL_OPS):
        return  # an Inf that came in with the inputs, or a fill value: not made here
    site = node.creation_site or user_site()
    lines = [
        f"{node.name} (forward) produced {_what(nan, inf)} in its output (shape {data.shape}): "
        f"{nan} NaN and {inf} Inf among {data.size} elements, the first at index {first}.",
    ]
    for i, t in enumerate(inputs):
        name = f" {t.name!r}" if t.name else ""
        lines.append(f"  input {i}{name}: {_format.stats(t._data)}")
    lines.append(f"  {node.name} was created at {_site_with_source(site)}")
    cause = _forward_cause(node.name, nan, data.dtype)
    if with_nan:
        lines.append(
            f"{_input_names(with_nan)} already held NaN, so it came in with the data: find where "
            "that input was made (run its computation inside detect_anomaly() too)."
        )
    elif with_inf:
        lines.append(
            f"{_input_names(with_inf)} held Inf (a -inf mask value, or an overflow upstream), "
            f"and {node.name} turned it into NaN: {cause}."
        )
    else:
        lines.append(f"The inputs were finite, so {node.name} made it: {cause}.")
    raise AnomalyError("\n".join(lines))


def _anomaly_backward(node: Any, grad_out: np.ndarray, grad_inputs: tuple) -> None:
    for position, grad in enumerate(grad_inputs):
        if not _is_checked(grad) or np.isfinite(grad).all():
            continue
        nan, inf, first = _count_bad(grad)
        inp = node.inputs[position]
        name = f" {inp.name!r}" if getattr(inp, "name", None) else ""
        lines = [
            f"{node.name} (backward) returned {_what(nan, inf)} in the gradient for input "
            f"{position}{name} (shape {grad.shape}): {nan} NaN and {inf} Inf, the first at "
            f"index {first}.",
            f"  {node.name} was created at {_site_with_source(node.creation_site)}",
            "  its formula: " + formula(node).replace("\n", "\n    "),
        ]
        if _is_checked(grad_out) and not np.isfinite(grad_out).all():
            lines.append(
                f"The gradient arriving at {node.name} already held NaN or Inf; it came from "
                "the gradient passed to backward() or from a hook."
            )
        else:
            cause = _BACKWARD_CAUSES.get(node.name, "the gradient arriving at it was finite")
            lines.append(f"The gradient arriving at {node.name} was finite: {cause}.")
        raise AnomalyError("\n".join(lines))


# Checksums of the arrays each node saved, taken at forward time in anomaly mode. Version
# counters (versions.py) see every write made through a tensor, but not one made straight into
# its ndarray (`t.numpy()[0] = 1`); a changed checksum at backward does.
_checksums: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _checksum(array: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(array).view(np.uint8))


def _record_checksums(node: Any, inputs: tuple, out: Tensor) -> None:
    saved = node._saved
    if node.recorded and saved:
        _checksums[node] = tuple(
            (i, _checksum(a)) for i, a in enumerate(saved) if isinstance(a, np.ndarray)
        )


def verify_saved(node: Any) -> None:
    """Raise AnomalyError if an array `node` saved changed since forward (anomaly mode only)."""
    recorded = _checksums.get(node)
    if not recorded or node.released:
        return
    for i, crc in recorded:
        array = node._saved[i]
        if _checksum(array) != crc:
            raise AnomalyError(
                f"{node.name}: saved array {i} (shape {array.shape}, {array.dtype}) was changed "
                f"in place after {node.name} saved it for backward, so its backward would "
                "compute a wrong gradient.\n"
                f"  {node.name} was created at {_site_with_source(node.creation_site)}\n"
                "The write went straight into the NumPy array (t.numpy()[...] = ..., or an "
                "array the tensor shares), which no tensor's version counter sees. Change the "
                "array only after backward(), or compute a new tensor instead of writing in "
                "place."
            )


def _verify_before_backward(node: Any, grad_out: np.ndarray) -> None:
    verify_saved(node)  # before the op's backward reads the arrays


class _Anomaly(threading.local):
    depth = 0  # nested detect_anomaly() blocks in this thread
    check_nan = 0  # how many of them are detect_anomaly(check_nan=True)


_anomaly = _Anomaly()


class detect_anomaly:
    """`with ta.detect_anomaly():` (or `@ta.detect_anomaly()`) turns on anomaly mode for the
    current thread.

    Inside it, each op records where your code created it ("file.py:42 in fn"), a NaN or Inf
    in any forward result or backward gradient raises `AnomalyError` at once (naming the op,
    the pass, the input or output, and that creation site; in backward before the gradient
    reaches any `.grad`), and arrays saved for backward are checksummed so an in-place change
    is caught at backward. Run both the forward pass and `backward()` inside it. An Inf written
    by `masked_fill` (the -inf of an attention mask), or carried in from an input, is allowed in
    forward; NaN never is. Slow: for hunting a bug. Re-entrant; everything is restored on exit,
    even on an error.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> detect_anomaly:
        if _anomaly.depth == 0:
            observers.on_forward.append(_record_checksums)
            observers.before_backward.append(_verify_before_backward)
        if self.check_nan and _anomaly.check_nan == 0:
            observers.on_forward.append(_anomaly_forward)
            observers.on_backward.append(_anomaly_backward)
        _anomaly.depth += 1
        _anomaly.check_nan += bool(self.check_nan)
        _SiteRecording.start()
        return self

    def __exit__(self, *exc: object) -> None:
        _anomaly.depth -= 1
        _anomaly.check_nan -= bool(self.check_nan)
        if self.check_nan and _anomaly.check_nan == 0:
            observers.on_forward.remove(_anomaly_forward)
            observers.on_backward.remove(_anomaly_backward)
        if _anomaly.depth == 0:
            observers.on_forward.remove(_record_checksums)
            observers.before_backward.remove(_verify_before_backward)
        _SiteRecording.stop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


def is_anomaly_enabled() -> bool:
    """True inside `detect_anomaly()` (in this thread)."""
    return _anomaly.depth > 0


class set_detect_anomaly:
    """`ta.autograd.set_detect_anomaly(True)`: turns anomaly mode on (False: off) now, as a
    call, or only inside `with ta.autograd.set_detect_anomaly(flag):`, as PyTorch's."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self._was = is_anomaly_enabled()
        self._mode = bool(mode)
        self._block = detect_anomaly(check_nan)
        if self._mode and not self._was:
            self._block.__enter__()
        elif not self._mode:
            while is_anomaly_enabled():  # (off: every open block of this thread is closed)
                detect_anomaly(bool(_anomaly.check_nan)).__exit__()

    def __enter__(self) -> set_detect_anomaly:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._mode and not self._was:
            self._block.__exit__()
        elif not self._mode and self._was:
            detect_anomaly().__enter__()


# ------------------------------------------------------------------------- op logging
class _Logging(threading.local):
    level = 0


_logging = _Logging()


def _site_suffix(node: Any) -> str:
    site = node.creation_site or user_site()  # (an unrecorded op has no creation_site)
    return f"   at {site}" if site else ""


def _print(line: str) -> None:
    print(f"[tinygrad_attn] {line}", file=sys.stderr)


def _log_forward(node: Any, inputs: tuple, out: Tensor) -> None:
    args = ", ".join(_format.short_label(t) for t in inputs)
    recorded = "" if node.recorded else "   (not recorded)"
    result = f"{_format.short_label(out)} {out.dtype}{recorded}{_site_suffix(node)}"
    _print(f"forward  {node.name}({args}) -> {result}")
    if _logging.level >= 2:
        _print(f"           out: {_format.stats(out._data)}")


def _log_backward(node: Any, grad_out: np.ndarray, grad_inputs: tuple) -> None:
    grads = ", ".join(
        f"{i}: -" if g is None else f"{i}: {tuple(np.shape(g))}" for i, g in enumerate(grad_inputs)
    )
    _print(f"backward {node.name}  grad_out {tuple(np.shape(grad_out))} -> grads {{{grads}}}")
    if _logging.level >= 2:
        _print(f"           grad_out: {_format.stats(grad_out)}")
        for i, g in enumerate(grad_inputs):
            if g is not None:
                _print(f"           grad {i}: {_format.stats(g)}")


def set_op_logging(level: int) -> int:
    """Print each op as it runs (in this thread), to stderr: 0 off, 1 ops and shapes (forward and
    backward), 2 also value statistics (min/mean/max, NaN/Inf counts). Returns the previous
    level. (Not a debugger breakpoint: for that, use `breakpoint()` or `backward_steps()`.)"""
    level = int(level)
    if level < 0:
        raise ValueError(f"set_op_logging({level}): the level must be 0 (off), 1 or 2")
    previous, _logging.level = _logging.level, level
    if previous == 0 and level > 0:
        observers.on_forward.insert(0, _log_forward)  # first: print before a check raises
        observers.on_backward.insert(0, _log_backward)
        _SiteRecording.start()
    elif previous > 0 and level == 0:
        observers.on_forward.remove(_log_forward)
        observers.on_backward.remove(_log_backward)
        _SiteRecording.stop()
    return previous


class log_ops:
    """`with ta.debug.log_ops(2):` prints every op run inside the block (see `set_op_logging`)."""

    def __init__(self, level: int = 1) -> None:
        self.level = level

    def __enter__(self) -> log_ops:
        self._previous = set_op_logging(self.level)
        return self

    def __exit__(self, *exc: object) -> None:
        set_op_logging(self._previous)


def _level_from_environment() -> int:
    raw = os.environ.get("TINYGRAD_ATTN_DEBUG", "").strip()
    if not raw:
        return 0
    try:
        return max(int(raw), 0)
    except ValueError:
        warnings.warn(
            f"TINYGRAD_ATTN_DEBUG={raw!r} is not a level; use 1 (ops and shapes) or 2 (also "
            "value statistics). Tracing stays off.",
            stacklevel=2,
        )
        return 0


_environment_level = _level_from_environment()
if _environment_level:
    set_op_logging(_environment_level)
