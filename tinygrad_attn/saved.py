"""Arrays saved for backward: why they are read-only, the lock table, and the note on the error.

Writing into an array that a graph saved for backward would silently corrupt its gradients, so
such a write must fail, at the line that does it. Two rules make it fail:

1. every op's result is read-only from birth (like a JAX array; copy it to change it), so the
   intermediate values a graph saves cannot be written, at no bookkeeping cost;
2. an array the user owns (a leaf's data, or the memory a view of it shares) is made read-only
   while a live node has it saved, and writable again when the last such node is released by
   backward or garbage-collected.

Whether a node may hold the user's memory is known per tensor: a tensor's `_exposed` is True
for a leaf, a constant wrapping the user's ndarray, anything whose data was assigned or changed
in place, and a view of any of these; an op's result that owns its memory (or views a buffer the
op made, which `settle_view` makes read-only too) has it False. A node whose inputs are all
unexposed locks nothing, and costs nothing here. What an op computes and saves for itself (the
attention weights, a mask of maxima) is reachable only through `ctx.saved_tensors`; the op makes
such buffers read-only (`ops._util.frozen`), and tests/test_ops.py checks that no op table row
leaves a saved array writable. So among what a node saved, the arrays still writable are exactly
the user's memory: `lock_saved` locks those, with no search for whose memory each array is.

The lock table (`_locked`) maps id(array) -> the holders of that lock, one per node, each
knowing the op's name and the tensor's name, so `saved_by(array)` and the note added to NumPy's
"assignment destination is read-only" error can say who holds it. It is shared by all threads and
guarded by one lock. `install_excepthook()` adds that note to uncaught errors; the package calls
it once, visibly, in `__init__.py` (`TINYGRAD_ATTN_EXCEPTHOOK=0` turns it off).

`setflags(False)` / `setflags(True)` are `write=False` / `write=True`, passed by position: NumPy
parses a keyword three times slower, and `apply` makes every op's result read-only.

This module must not know about ops, the engine or tensors beyond the arrays and names given.
"""

from __future__ import annotations

import linecache
import sys
import threading
import warnings
import weakref
from collections import deque
from itertools import repeat
from typing import Any

import numpy as np

_NOTE_PREFIX = "tinygrad_attn: "

_table_lock = threading.Lock()
# id(array) -> [array, [weakref to node, ...]]: one entry per live node that saved it.
_locked: dict[int, list] = {}
# id(owner) -> views whose lock ended while their owner was still locked by another node: NumPy
# refuses to make a view writable while the array it views is read-only, so they wait for it.
_waiting: dict[int, list] = {}
# Nodes collected while the table was busy (a collection can run at any allocation): unlocked
# as soon as the table is free.
_collected: deque = deque()


def _owner(array: np.ndarray) -> np.ndarray:
    """The array that owns `array`'s memory (itself, unless it is a view)."""
    while array.base is not None and isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _memory_of(array: np.ndarray) -> tuple:
    """The array and, if it is a view, the array that owns its memory."""
    owner = _owner(array)
    return (array,) if owner is array else (array, owner)


def _entries(array: np.ndarray, table: dict | None = None) -> list:
    """The lock-table entries (of `table`, a snapshot, or the live `_locked`) that hold
    `array`'s memory: the array's own first, then its owner's."""
    table = _locked if table is None else table
    return [table[id(t)] for t in _memory_of(array) if id(t) in table]


def _holders(entry: list) -> list:
    """The live nodes that hold an entry's array."""
    return [node for node in (ref() for ref in list(entry[1])) if node is not None]


class _Hold(weakref.ref):
    """A node's hold on the arrays it saved: a weak reference to the node (whose collection
    unlocks them) that carries the arrays, owners first."""

    __slots__ = ("held",)


def lock_saved(node: Any, arrays: tuple) -> None:
    """Make read-only, for as long as `node` lives unreleased, every writable array it saved
    (with the array owning the memory, for a view). For a built-in op that can only be memory
    the user may hold (an input's data, or a view of it): op results are read-only from birth
    and the intermediates an op saves are made read-only by the op (`ops._util.frozen`). A
    user's op may save any array of theirs, and the same rule covers it. An array that another
    live node holds already is held by this node too. The caller (apply) calls this only when
    an input is `_exposed` (or the op is a user's), so most nodes never come here."""
    targets = []  # each array saved, preceded by the array owning its memory if it is a view
    for array in arrays:
        if array.__class__ is not np.ndarray and not isinstance(array, np.ndarray):
            continue  # (a number or a shape; a subclass of the user's is held too)
        if array.base is not None:
            targets.append(_owner(array))  # owners first: see _waiting
        targets.append(array)
    ref = _Hold(node, _node_collected)  # the node's hold: in the table's entries and on the node
    ref.held = held = []  # what it holds a lock on
    with _table_lock:
        for target in targets:
            entry = _locked.get(id(target))
            if entry is not None:  # another live node holds it too
                entry[1].append(ref)
            elif target.flags.writeable:
                target.setflags(False)
                _locked[id(target)] = [target, [ref]]
            else:
                continue  # read-only, and not by a lock: an op's own, or made so by the user
            held.append(target)
    if held:
        node._lock_ref = ref
    if _collected:
        _drain()


def note_replaced(replaced: list, by: str) -> None:
    """`by` (an optimizer's step) gives these parameters new arrays instead of writing into
    arrays a live graph saved: `replaced` is [(old array, parameter name), ...]. The nodes that
    hold them are marked, so that the first of them to run backward warns (`warn_replaced`):
    what that graph computes is for the old values."""
    with _table_lock:
        nodes = {id(n): n for a, _ in replaced for e in _entries(a) for n in _holders(e)}
    names = [repr(name) if name else f"a parameter of shape {a.shape}" for a, name in replaced]
    if len(names) > 3:
        names[3:] = [f"{len(names) - 3} more"]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    them = "it" if len(replaced) == 1 else "them"
    ticket = [f"{by} changed {listed} after this graph's forward saved {them} for backward"]
    for node in nodes.values():  # one ticket for them all: one warning per step, not per node
        node._replaced = ticket
        node.watched = True  # (the engine then looks at the node: watched_backward)


def warn_replaced(node: Any) -> None:
    """If `note_replaced` marked `node`, warn (once for all the nodes one step marked)."""
    ticket = node.__dict__.pop("_replaced", None)
    if ticket:
        warnings.warn(
            f"backward(): {ticket.pop()}. The graph keeps the old values, so its gradients are "
            "for them; PyTorch raises here ('... modified by an inplace operation'). For "
            "gradients at the new values, run the forward pass again after the step.",
            RuntimeWarning,
            stacklevel=5,  # the caller of backward(): Tensor.backward, the loop, watched_backward
        )


def settle_view(out: np.ndarray, inputs: tuple, op: type) -> bool:
    """For an op's result that is a view: whether it shares memory the user may hold (it then
    inherits the input's `_exposed`). A view of a buffer the op made itself (a reshape of a
    product it computed) makes that buffer read-only too, so the result is read-only through
    and through; a user's op may return a view of any array of theirs: it counts as exposed."""
    owner = _owner(out)
    for t in inputs:
        if _owner(t._data) is owner:
            return t._exposed
    if op._checks_fields:
        return True
    owner.setflags(False)
    return False


def unlock_saved(nodes: list) -> None:
    """Give back the holds (`node._lock_ref`) of nodes being released, together; each node then
    forgets its hold, so the hold goes now and the node's collection later has nothing to give
    back."""
    if nodes:
        with _table_lock:
            for node in nodes:
                _unlock(node._lock_ref)
        deque(map(setattr, nodes, repeat("_lock_ref"), repeat(None)), maxlen=0)  # (one C pass)
    if _collected:
        _drain()


def _node_collected(ref: weakref.ref) -> None:
    # A graph dropped without backward must not leave its arrays read-only. A collection can
    # run at any allocation, even while a thread holds the table: then it waits in the queue.
    if _table_lock.acquire(blocking=False):
        try:
            _unlock(ref)
        finally:
            _table_lock.release()
        if _collected:
            _drain()
    else:
        _collected.append(ref)


def _drain() -> None:
    """Unlock what collected nodes held, if the table is free (else its holder will)."""
    while _collected and _table_lock.acquire(blocking=False):
        try:
            while _collected:
                _unlock(_collected.popleft())
        finally:
            _table_lock.release()


def _unlock(ref: _Hold) -> None:
    targets, ref.held = ref.held, ()  # (once: a released node may be collected later)
    for target in targets:  # owners first: see _waiting
        holders = _locked[id(target)][1]
        holders.pop() if holders[-1] is ref else holders.remove(ref)  # (newest first: O(1))
        if not holders and target.base is None and not _waiting:  # an array owning its memory
            _locked.pop(id(target))[0].setflags(True)  # (the entry's [0] is the target)
        elif not holders:
            _free(target)


def _free(array: np.ndarray) -> None:
    """The last holder let go, in the cases `_unlock` does not handle inline (a view, or any
    array while views wait): make it writable again (a view waits for its owner)."""
    del _locked[id(array)]
    owner = _owner(array)
    if owner is not array and not owner.flags.writeable:
        if id(owner) in _locked:  # another live node still holds the memory
            _waiting.setdefault(id(owner), []).append(array)
        return None  # (an owner someone else made read-only keeps its views read-only too)
    array.setflags(True)
    for view in _waiting.pop(id(array), ()):
        if id(view) not in _locked:
            view.setflags(True)
    return None


def _holder_ops(entry: list) -> list[str]:
    return [node.name for node in _holders(entry)]


def _holder_names(entry: list) -> set[str]:
    """Names of the tensors whose data is this array, among the holders' inputs."""
    names = set()
    for node in _holders(entry):
        for parent in getattr(node, "parents", ()):
            if getattr(parent, "data", None) is entry[0] and parent.name:
                names.add(parent.name)
    return names


def saved_by(array: np.ndarray) -> list[str]:
    """Names of the live graph ops that saved `array` (or memory it shares) for backward."""
    entries = _entries(np.asarray(array))
    return _holder_ops(entries[0]) if entries else []


# ------------------------------------------------------------ the note on the read-only error
def _ops_text(ops: list[str]) -> str:
    counts: dict[str, int] = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    return ", ".join(op if n == 1 else f"{op} ({n} times)" for op, n in counts.items())


def _held_text(text: str, entry: list) -> str:
    array = entry[0]
    names = _holder_names(entry)
    names.discard(text.removesuffix(".data"))
    also = f" (the data of {', '.join(repr(n) for n in sorted(names))})" if names else ""
    ops = _ops_text(_holder_ops(entry))
    return f"`{text}`{also} (shape {array.shape}, {array.dtype}) was saved for backward by {ops}"


def _failing_frame(exc: BaseException) -> tuple[Any, int] | None:
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return None if tb is None else (tb.tb_frame, tb.tb_lineno)


def _visible_arrays(frame: Any) -> list[tuple[str, np.ndarray]]:
    """(how the code names it, array) for the arrays and tensors' data a frame can see."""
    found = []
    for name, value in list(frame.f_locals.items()):
        data = value if isinstance(value, np.ndarray) else getattr(value, "data", None)
        if isinstance(data, np.ndarray):
            found.append((name if data is value else f"{name}.data", data))
    return found


def explain_read_only(exc: BaseException) -> str | None:
    """If `exc` is NumPy's "assignment destination is read-only" for an array that a graph
    holds (or an op's result): which op saved it and what to do. Otherwise None.

    What is known comes from the lock table and the failing frame's variables; the line of
    source, when there is one, only narrows which of those the write named (without it, every
    held array the frame can see is listed)."""
    if not isinstance(exc, ValueError) or "read-only" not in str(exc):
        return None
    where = _failing_frame(exc)
    if where is None:
        return None
    frame, lineno = where
    line = linecache.getline(frame.f_code.co_filename, lineno)
    visible = _visible_arrays(frame)
    named = [(text, a) for text, a in visible if _mentions(line, text)]
    candidates = named or ([] if line.strip() else visible)
    held = dict(_locked)  # (a snapshot: the table may change while the note is written)
    found, seen = [], set()
    for text, array in candidates:
        entry = next(iter(_entries(array, held)), None)
        if entry is not None and id(entry[0]) not in seen:
            seen.add(id(entry[0]))
            found.append((text, entry))
    if len(found) == 1:
        text, entry = found[0]
        return (
            f"{_NOTE_PREFIX}{_held_text(text, entry)}, so it is read-only until that graph's "
            "backward() has run: writing into it now would silently change the gradients. Make "
            f"the change after backward(), or write into a copy ({text} = {text}.copy()), or "
            "compute a new tensor instead (y = x * 0.5), or drop the graph you no longer need "
            "(del loss)."
        )
    if found:
        lines = [
            f"{_NOTE_PREFIX}the write went into one of these arrays, each saved for backward by "
            "a live graph and read-only until its backward() has run (make the change after "
            "backward(), or write into a copy):"
        ]
        lines += [f"  {_held_text(text, entry)}" for text, entry in found[:6]]
        return "\n".join(lines)
    for text, array in candidates:
        if text.endswith(".data") and not array.flags.writeable:
            return (
                f"{_NOTE_PREFIX}`{text}` (shape {array.shape}, {array.dtype}) is read-only but "
                "no live graph holds it: tinygrad_attn makes every op's result read-only from "
                "birth, so that nothing a graph saved for backward can change behind its back. "
                f"To change it, write into a copy ({text} = {text}.copy()) or compute a new "
                "tensor (y = x * 0.5)."
            )
    return None


def _mentions(line: str, text: str) -> bool:
    """Whether `text` (a name, or `name.data`) stands in `line` as a whole name."""
    start = line.find(text)
    while start != -1:
        before = line[start - 1] if start else " "
        after = line[start + len(text)] if start + len(text) < len(line) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
            return True
        start = line.find(text, start + 1)
    return False


# PyTorch's in-place methods, which PyTorch code calls on `.data` (a tensor there, an ndarray
# here): `module.weight.data.normal_(0.0, 0.02)` in older model code.
_TORCH_IN_PLACE = {
    "normal_", "uniform_", "zero_", "fill_", "copy_", "add_", "sub_", "mul_", "div_", "clamp_",
}  # fmt: skip


def explain_torch_method(exc: BaseException) -> str | None:
    """If `exc` is "'numpy.ndarray' object has no attribute 'normal_'" (or another of PyTorch's
    in-place methods): what to write instead. Otherwise None."""
    name = getattr(exc, "name", None)
    if not isinstance(exc, AttributeError) or not isinstance(getattr(exc, "obj", None), np.ndarray):
        return None
    if name not in _TORCH_IN_PLACE:
        return None
    where = _failing_frame(exc)
    line = linecache.getline(where[0].f_code.co_filename, where[1]).strip() if where else ""
    call = f".data.{name}("
    fix = line.replace(call, f".{name}(") if call in line else f"module.weight.{name}(...)"
    return (
        f"{_NOTE_PREFIX}`.data` (and `.grad`) is the NumPy array here, not a tensor as in "
        f"PyTorch, and arrays have no `{name}()`. Call it on the tensor itself, under no_grad: "
        f"`with ta.no_grad(): {fix}`, or use ta.nn.init (e.g. `nn.init.normal_(w, 0.0, 0.02)`)."
    )


def add_note(exc: BaseException, note: str) -> None:
    """Attach `note` to `exc` once (as an exception note; Python 3.10: in the message)."""
    if any(n.startswith(_NOTE_PREFIX) for n in getattr(exc, "__notes__", ())):
        return
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        exc.args = (f"{exc.args[0] if exc.args else ''}\n{note}",) + tuple(exc.args[1:])


class _Excepthook:
    """Adds the read-only note (or the note on `.data.normal_()`) to an uncaught error, then
    hands it to the previous hook."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, exc_type: type, exc: BaseException, tb: Any) -> None:
        try:
            if exc is not None:
                note = explain_read_only(exc.with_traceback(tb)) or explain_torch_method(exc)
                if note:
                    add_note(exc, note)
        except Exception:  # noqa: BLE001  (never let the explanation hide the real error)
            pass
        self.previous(exc_type, exc, tb)


def install_excepthook() -> None:
    """Chain a `sys.excepthook` that explains NumPy's read-only error for arrays saved for
    backward. Idempotent; `uninstall_excepthook()` puts the previous hook back."""
    if not isinstance(sys.excepthook, _Excepthook):
        sys.excepthook = _Excepthook(sys.excepthook)


def uninstall_excepthook() -> None:
    """Remove the hook `install_excepthook()` added (if it is still the current one)."""
    if isinstance(sys.excepthook, _Excepthook):
        sys.excepthook = sys.excepthook.previous
