"""Debugging aids that read the graph: step explanations, anomaly mode, creation sites, tracing.

- `explain_step(step)`: what one `BackwardStep` did, in several lines (`step.explain()`).
- `detect_anomaly()`: while active, every op records where the user's code created it, and the
  first NaN/Inf in a forward result or a backward gradient raises `AnomalyError` naming the op,
  the pass, the input or output, and that creation site. Saved arrays are checksummed, so one
  changed in place behind the read-only lock's back is caught at backward, naming its op.
- Writing into an array that a graph saved for backward fails with NumPy's "assignment
  destination is read-only"; `explain_read_only(exc)` says which op saved it and what to do, and
  that explanation is added to the error automatically in anomaly mode and for uncaught errors.
- `TINYGRAD_ATTN_DEBUG=1` (read once, at import) prints each op to stderr as it runs, forward
  and backward, with shapes; `=2` adds value statistics. `set_trace(level)` / `trace(level)` do
  the same from code.

Everything here plugs into `function.observers`; nothing in the core imports this module, and
it must never change what the engine computes — only watch it and explain it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import os
import re
import sys
import warnings
import weakref
import zlib
from collections.abc import Callable
from typing import Any

import numpy as np

from . import function as _function
from .function import observers, saved_by, set_creation_site_finder
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
    """Reference-counted switch for recording creation sites (anomaly mode and tracing share it):
    the first user installs `user_site` as the finder, the last one puts the old finder back."""

    users = 0
    previous_finder: Callable[[], str | None] | None = None

    @classmethod
    def start(cls) -> None:
        if cls.users == 0:
            cls.previous_finder = _function._creation_site
            set_creation_site_finder(user_site)
        cls.users += 1
        observers.record_sites += 1

    @classmethod
    def stop(cls) -> None:
        observers.record_sites -= 1
        cls.users -= 1
        if cls.users == 0:
            set_creation_site_finder(cls.previous_finder or (lambda: None))
            cls.previous_finder = None


# ---------------------------------------------------------------------- array summaries
SMALL = 64  # arrays with at most this many elements are shown in full


def _label(t: Any) -> str:
    """`name (shape)` or just `(shape)` for a tensor, a ReleasedTensor or an ndarray."""
    shape = tuple(t.shape)
    name = getattr(t, "name", None)
    return f"{name} {shape}" if name else f"{shape}"


def stats(array: np.ndarray) -> str:
    """One line: shape, min/mean/max/norm over the finite values, and NaN/Inf counts."""
    a = np.asarray(array)
    head = f"shape {a.shape} {a.dtype}"
    if a.size == 0 or a.dtype.kind not in "fciub":
        return head
    values = a.astype(np.float64) if a.dtype.kind in "iub" else a
    finite = np.isfinite(values)
    nan = int(np.isnan(values).sum())
    inf = int(a.size - finite.sum() - nan)
    body = head
    if finite.any():
        ok = values[finite]
        body += (
            f"  min {ok.min():.4g}  mean {ok.mean():.4g}  max {ok.max():.4g}"
            f"  norm {np.linalg.norm(ok):.4g}"
        )
    if nan or inf:
        body += f"  NaN {nan}  Inf {inf}"
    return body


def describe(array: np.ndarray | None, indent: str = "") -> str:
    """A small array in full (indented to line up), a large one as `stats`."""
    if array is None:
        return "(released: the graph no longer holds this array)"
    a = np.asarray(array)
    if a.size > SMALL:
        return stats(a)
    body = np.array2string(a, precision=4, suppress_small=True, separator=", ")
    return body.replace("\n", "\n" + indent)


# ------------------------------------------------------------------------- explain_step
_NODE_FIELDS = {
    "inputs", "parents", "needs_input_grad", "output_ref", "output_shape", "output_dtype",
    "output_name", "scope", "creation_site", "released", "output_hooks",
    "retains_output_grad",
}  # fmt: skip


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
    for key, value in vars(node).items():
        if key.startswith("_") or key in _NODE_FIELDS or isinstance(value, np.ndarray):
            continue
        text = repr(value)
        shown.append(f"{key}={text if len(text) <= 40 else text[:37] + '...'}")
    return ", ".join(shown)


def _origin(t: Any, needs: bool) -> str:
    if getattr(t, "grad_fn", None) is not None:
        return f"made by {t.grad_fn.name}"
    return "leaf, requires grad" if needs else "constant (no grad)"


def explain_step(step: Any) -> str:
    """Several lines about one backward step: the op and where it was made, the formula its
    backward applied, its output, the gradient that arrived, and each input's gradient."""
    node = step.node
    lines = [f"step {step.index}: {step.op}.backward"]
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
    lines.append(f"  output    {_label(out)} {out.dtype}")
    lines.append("  grad_out  " + describe(step.grad_output, pad))
    needs = getattr(node, "needs_input_grad", (True,) * len(step.inputs))
    for i, (t, grad) in enumerate(zip(step.inputs, step.grad_inputs)):
        lines.append(f"  input {i}   {_label(t)} {t.dtype}, {_origin(t, needs[i])}")
        if grad is None:
            why = "no gradient: it does not require grad" if not needs[i] else "no gradient"
            lines.append(f"    grad    ({why})")
            continue
        lines.append(f"    grad    {describe(grad, pad)}")
        if isinstance(t, Tensor) and t.grad_fn is None and t._grad is not None:
            lines.append(f"    .grad   so far: {stats(t._grad)}")
    return "\n".join(lines)


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
    return [(i, t) for i, t in enumerate(inputs) if _is_checked(t.data) and test(t.data).any()]


def _input_names(found: list) -> str:
    return ", ".join(f"input {i}" + (f" {t.name!r}" if t.name else "") for i, t in found)


def _anomaly_forward(node: Any, inputs: tuple, out: Tensor) -> None:
    data = out.data
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
        lines.append(f"  input {i}{name}: {stats(t.data)}")
    lines.append(f"  {node.name} was created at {_site_with_source(site)}")
    cause = _FORWARD_CAUSES.get(
        node.name, "look in its forward for 0/0, inf - inf, 0 * inf, or log or sqrt of a negative"
    )
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


# Checksums of the arrays each node saved, taken at forward time in anomaly mode. The read-only
# lock cannot see writes made through a view that existed before the lock (NumPy does not track
# a base's views), nor a lock undone by hand; a changed checksum at backward can.
_checksums: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _checksum(array: np.ndarray) -> int:
    return zlib.crc32(np.ascontiguousarray(array).view(np.uint8))


def _record_checksums(node: Any, inputs: tuple, out: Tensor) -> None:
    saved = node._saved
    if getattr(node, "_recording", False) and saved:
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
                "The write went around the read-only lock, through a view that existed "
                "before the forward pass (or by setting flags.writeable). Change the array "
                "only after backward(), or compute a new tensor instead of writing in place."
            )


def _verify_before_backward(node: Any, grad_out: np.ndarray) -> None:
    verify_saved(node)  # before the op's backward reads the arrays


class _Anomaly:
    depth = 0
    check_nan = 0  # how many active detect_anomaly(check_nan=True) blocks


class detect_anomaly:
    """`with ta.detect_anomaly():` (or `@ta.detect_anomaly()`) turns on anomaly mode.

    Inside it, each op records where your code created it ("file.py:42 in fn"), a NaN or Inf
    in any forward result or backward gradient raises `AnomalyError` at once (naming the op,
    the pass, the input or output, and that creation site), and arrays saved for backward are
    checksummed so an in-place change is caught at backward. Run both the forward pass and
    `backward()` inside it. An Inf written by `masked_fill` (the -inf of an attention mask), or
    carried in from an input, is allowed in forward; NaN never is. Slow: for hunting a bug.
    Re-entrant; everything is restored on exit, even on an error.
    """

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = check_nan

    def __enter__(self) -> detect_anomaly:
        if _Anomaly.depth == 0:
            observers.on_forward.append(_record_checksums)
            observers.before_backward.append(_verify_before_backward)
            _ReadOnlyNotes.start()
        if self.check_nan and _Anomaly.check_nan == 0:
            observers.on_forward.append(_anomaly_forward)
            observers.on_backward.append(_anomaly_backward)
        _Anomaly.depth += 1
        _Anomaly.check_nan += bool(self.check_nan)
        _SiteRecording.start()
        return self

    def __exit__(self, *exc: object) -> None:
        _SiteRecording.stop()
        _Anomaly.depth -= 1
        _Anomaly.check_nan -= bool(self.check_nan)
        if self.check_nan and _Anomaly.check_nan == 0:
            observers.on_forward.remove(_anomaly_forward)
            observers.on_backward.remove(_anomaly_backward)
        if _Anomaly.depth == 0:
            observers.on_forward.remove(_record_checksums)
            observers.before_backward.remove(_verify_before_backward)
            _ReadOnlyNotes.stop()

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)

        return wrapper


def is_anomaly_enabled() -> bool:
    """True inside `detect_anomaly()`."""
    return _Anomaly.depth > 0


# --------------------------------------------------- writes into arrays saved for backward
_NOTE_PREFIX = "tinygrad_attn: "


def _failing_expression(frame: Any, lasti: int) -> ast.AST | None:
    """The expression of the instruction at `lasti` (Python 3.11+ keeps column positions)."""
    if not hasattr(frame.f_code, "co_positions") or lasti < 0:
        return None
    try:
        positions = list(frame.f_code.co_positions())[lasti // 2]
        start, end, col, end_col = positions
        if start is None or col is None or start != end:
            return None
        text = linecache.getline(frame.f_code.co_filename, start)[col:end_col]
        try:
            return ast.parse(text, mode="eval").body
        except SyntaxError:
            return ast.parse(text, mode="exec").body[0]
    except (SyntaxError, ValueError, IndexError, TypeError):
        return None


def _targets(node: ast.AST | None) -> list[ast.AST]:
    """The sub-expressions that may be the array written to, most likely first."""
    if isinstance(node, ast.AugAssign):
        node = node.target
    if isinstance(node, ast.Subscript):
        return [node.value]
    if isinstance(node, ast.Call):
        receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        keywords = [k.value for k in node.keywords if k.arg == "out"]
        return keywords + receiver + list(node.args)
    return [node] if isinstance(node, (ast.Name, ast.Attribute)) else []


def _evaluate(node: ast.AST, frame: Any) -> Any:
    """Value of a plain name or attribute chain (`x.data`, `self.w.data`); nothing else runs."""
    if isinstance(node, ast.Name):
        for scope in (frame.f_locals, frame.f_globals, vars(builtins)):
            if node.id in scope:
                return scope[node.id]
        raise LookupError(node.id)
    if isinstance(node, ast.Attribute):
        return getattr(_evaluate(node.value, frame), node.attr)
    raise LookupError("not a plain name")


def _as_array(value: Any) -> np.ndarray | None:
    if isinstance(value, Tensor):
        value = value.data
    return value if isinstance(value, np.ndarray) else None


def _written(frame: Any, lasti: int) -> tuple[list, list]:
    """(text, array, is a tensor's data) for the arrays the failing write may have targeted:
    first those named in the failing expression, then the frame's local arrays and tensors."""
    named: list = []
    for target in _targets(_failing_expression(frame, lasti)):
        try:
            value = _evaluate(target, frame)
            owner = _evaluate(target.value, frame) if isinstance(target, ast.Attribute) else None
        except Exception:  # noqa: BLE001  (a failed lookup only means: not this one)
            continue
        array = _as_array(value)
        if array is not None:
            of_tensor = isinstance(value, Tensor) or isinstance(owner, Tensor)
            named.append((ast.unparse(target), array, of_tensor))
    local = []
    for name, value in list(frame.f_locals.items()):
        array = _as_array(value)
        if array is not None:
            text = f"{name}.data" if isinstance(value, Tensor) else name
            local.append((text, array, isinstance(value, Tensor)))
    return named, local


def _ops_text(ops: list[str]) -> str:
    counts: dict[str, int] = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    return ", ".join(op if n == 1 else f"{op} ({n} times)" for op, n in counts.items())


def _held_note(text: str, array: np.ndarray, ops: list[str]) -> str:
    return (
        f"{_NOTE_PREFIX}`{text}` (shape {array.shape}, {array.dtype}) was saved for backward by "
        f"{_ops_text(ops)}, so it is read-only until that graph's backward() has run: writing "
        "into it now would silently change the gradients. Make the change after backward(), or "
        f"write into a copy ({text} = {text}.copy()), or compute a new tensor instead "
        "(y = x * 0.5), or drop the graph you no longer need (del loss)."
    )


def _explain_frame(frame: Any, lasti: int) -> str | None:
    """The note for a failed write in `frame`; "" when the written array was found and is not
    one the library made read-only; None when it could not be found."""
    named, local = _written(frame, lasti)
    for text, array, _ in named:
        ops = saved_by(array)
        if ops:
            return _held_note(text, array, ops)
    for text, array, of_tensor in named:
        if of_tensor and not array.flags.writeable:
            return (
                f"{_NOTE_PREFIX}`{text}` (shape {array.shape}, {array.dtype}) is read-only "
                "but no live graph holds it. tinygrad_attn makes every op's result read-only "
                "from birth, so that nothing a graph saved for backward can change behind its "
                f"back. To change it, write into a copy ({text} = {text}.copy()) or compute a "
                "new tensor (y = x * 0.5)."
            )
    if named:
        return ""  # the write's target is known and is none of ours
    for text, array, _ in local:
        ops = saved_by(array)
        if ops:
            return _held_note(text, array, ops)
    return None


def explain_read_only(exc: BaseException) -> str | None:
    """If `exc` is NumPy's "assignment destination is read-only" raised by writing into an
    array that a graph saved for backward: the explanation (which op saved it, what to do).
    Otherwise None. Use it on an error you caught; anomaly mode adds it to the error itself."""
    if not isinstance(exc, ValueError) or "read-only" not in str(exc):
        return None
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lasti))
        tb = tb.tb_next
    for frame, lasti in reversed(frames):  # innermost first: that is where the write was
        note = _explain_frame(frame, lasti)
        if note is not None:
            return note or None
    if _function._locked:
        return (
            f"{_NOTE_PREFIX}{len(_function._locked)} array(s) are held read-only for backward "
            "by live graphs right now; if this is one of them, run backward() (or drop that "
            "graph) before writing into it. ta.function.saved_by(array) names the op."
        )
    return None


def _add_note(exc: BaseException, note: str) -> None:
    if any(n.startswith(_NOTE_PREFIX) for n in getattr(exc, "__notes__", ())):
        return
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:  # Python 3.10: no notes; extend the message instead
        exc.args = (f"{exc.args[0] if exc.args else ''}\n{note}",) + tuple(exc.args[1:])


class _ReadOnlyNotes:
    """In anomaly mode, a trace function adds `explain_read_only`'s note to NumPy's read-only
    error the moment it is raised. It uses `sys.settrace` with line events off (a call per
    Python call and return), and steps aside when a debugger or coverage tool is tracing."""

    active = False
    traced_frames: list = []

    @staticmethod
    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if event == "call":
            frame.f_trace_lines = False
        elif event == "exception" and isinstance(arg[1], ValueError) and arg[2].tb_next is None:
            exc = arg[1]  # (raised by this frame's own instruction, not passing through)
            if "read-only" in str(exc):
                note = _explain_frame(frame, frame.f_lasti)
                if note:
                    _add_note(exc, note)
        return _ReadOnlyNotes.tracer

    @classmethod
    def start(cls) -> None:
        if sys.gettrace() is not None:
            return
        sys.settrace(cls.tracer)
        frame = sys._getframe(1)
        while frame is not None:  # frames already running get a tracer only if given one
            if frame.f_trace is None:
                frame.f_trace = cls.tracer
                frame.f_trace_lines = False
                cls.traced_frames.append(frame)
            frame = frame.f_back
        cls.active = True

    @classmethod
    def stop(cls) -> None:
        if not cls.active:
            return
        if sys.gettrace() is cls.tracer:
            sys.settrace(None)
        for frame in cls.traced_frames:
            if frame.f_trace is cls.tracer:
                frame.f_trace = None
        cls.traced_frames = []
        cls.active = False


def _excepthook(exc_type: type, exc: BaseException, tb: Any) -> None:
    """Add the read-only explanation to an uncaught error, then show it as before."""
    try:
        if exc is not None and tb is not None:
            note = explain_read_only(exc.with_traceback(tb))
            if note:
                _add_note(exc, note)
    except Exception:  # noqa: BLE001  (never let the explanation hide the real error)
        pass
    _previous_excepthook(exc_type, exc, tb)


_previous_excepthook = sys.excepthook
sys.excepthook = _excepthook


# ------------------------------------------------------------------------------ tracing
_trace_level = 0


def _site_suffix(node: Any) -> str:
    site = node.creation_site or user_site()  # (an unrecorded op has no creation_site)
    return f"   at {site}" if site else ""


def _print(line: str) -> None:
    print(f"[tinygrad_attn] {line}", file=sys.stderr)


def _trace_forward(node: Any, inputs: tuple, out: Tensor) -> None:
    args = ", ".join(_label(t) for t in inputs)
    recorded = "" if getattr(node, "_recording", False) else "   (not recorded)"
    _print(
        f"forward  {node.name}({args}) -> {_label(out)} {out.dtype}{recorded}{_site_suffix(node)}"
    )
    if _trace_level >= 2:
        _print(f"           out: {stats(out.data)}")


def _trace_backward(node: Any, grad_out: np.ndarray, grad_inputs: tuple) -> None:
    grads = ", ".join(
        f"{i}: -" if g is None else f"{i}: {tuple(np.shape(g))}" for i, g in enumerate(grad_inputs)
    )
    _print(f"backward {node.name}  grad_out {tuple(np.shape(grad_out))} -> grads {{{grads}}}")
    if _trace_level >= 2:
        _print(f"           grad_out: {stats(grad_out)}")
        for i, g in enumerate(grad_inputs):
            if g is not None:
                _print(f"           grad {i}: {stats(g)}")


def set_trace(level: int) -> int:
    """Print each op as it runs, to stderr: 0 off, 1 ops and shapes (forward and backward),
    2 also value statistics (min/mean/max, NaN/Inf counts). Returns the previous level."""
    global _trace_level
    level = int(level)
    if level < 0:
        raise ValueError(f"set_trace({level}): the level must be 0 (off), 1 or 2")
    previous, _trace_level = _trace_level, level
    if previous == 0 and level > 0:
        observers.on_forward.insert(0, _trace_forward)  # first: print before a check raises
        observers.on_backward.insert(0, _trace_backward)
        _SiteRecording.start()
    elif previous > 0 and level == 0:
        observers.on_forward.remove(_trace_forward)
        observers.on_backward.remove(_trace_backward)
        _SiteRecording.stop()
    return previous


class trace:
    """`with ta.debug.trace(2):` prints every op inside the block (see `set_trace`)."""

    def __init__(self, level: int = 1) -> None:
        self.level = level

    def __enter__(self) -> trace:
        self._previous = set_trace(self.level)
        return self

    def __exit__(self, *exc: object) -> None:
        set_trace(self._previous)


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
    set_trace(_environment_level)
