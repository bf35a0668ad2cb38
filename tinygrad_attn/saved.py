"""Arrays saved for backward: why they are read-only, the lock table, and the note on the error.

Writing into an array that a graph saved for backward would silently corrupt its gradients, so
such a write must fail, at the line that does it. Two rules make it fail:

1. every op's result is read-only from birth (like a JAX array; copy it to change it), so the
   intermediate values a graph saves cannot be written, at no bookkeeping cost;
2. an array the user owns (a leaf's data, or the memory a view of it shares) is made read-only
   while a live node has it saved, and writable again when the last such node is released by
   backward or garbage-collected.

The lock table (`_locked`) maps id(array) -> the holders of that lock, one per node, each
knowing the op's name and the tensor's name, so `saved_by(array)` and the note added to NumPy's
"assignment destination is read-only" error can say who holds it. It is shared by all threads and
guarded by one lock. `install_excepthook()` adds that note to uncaught errors; the package calls
it once, visibly, in `__init__.py` (`TINYGRAD_ATTN_EXCEPTHOOK=0` turns it off).

This module must not know about ops, the engine or tensors beyond the arrays and names given.
"""

from __future__ import annotations

import linecache
import sys
import threading
import weakref
from collections import deque
from typing import Any

import numpy as np

_NOTE_PREFIX = "tinygrad_attn: "

_table_lock = threading.Lock()
# id(array) -> [array, [_Holder, ...]]: one holder per live node that saved it.
_locked: dict[int, list] = {}
# id(owner) -> views whose lock ended while their owner was still locked by another node: NumPy
# refuses to make a view writable while the array it views is read-only, so they wait for it.
_waiting: dict[int, list] = {}
# weakref(node) -> (arrays, holder): what each live locking node holds, so that a graph dropped
# without backward unlocks its arrays when its node is collected.
_holders: dict[weakref.ref, tuple] = {}
# Nodes collected while the table was busy (a collection can run at any allocation): unlocked
# by whoever holds the table when it lets go.
_collected: deque = deque()


def _memory_of(array: np.ndarray) -> tuple:
    """The array and, if it is a view, the array that owns its memory."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return (array,) if owner is array else (array, owner)


class _Holder:
    """One node's hold on the arrays it saved: the op's name and the tensors' names."""

    __slots__ = ("op", "names")

    def __init__(self, op: str, names: dict) -> None:
        self.op = op
        self.names = names  # id(array) -> the name of the tensor it is the data of


def lock_saved(node: Any, arrays: tuple, inputs: tuple) -> None:
    """Make read-only, for as long as `node` lives unreleased, those of `arrays` that need it:
    not op results or constants, which are read-only for good. `inputs` are the node's input
    tensors, whose names the error note uses."""
    targets = [
        a
        for a in arrays
        if a.__class__ is np.ndarray
        and (a.base is not None or a.flags.writeable or id(a) in _locked)
    ]
    if not targets:
        return
    holder = _Holder(type(node).__name__, {id(t.data): t.name for t in inputs if t.name})
    ref = weakref.ref(node, _node_collected)
    _table_lock.acquire()
    try:
        for array in targets:
            for target in _memory_of(array):
                entry = _locked.get(id(target))
                if entry is not None:
                    entry[1].append(holder)
                elif target.flags.writeable:
                    target.setflags(write=False)
                    _locked[id(target)] = [target, [holder]]
        _holders[ref] = (targets, holder)
    finally:
        _release_table()
    node._lock_ref = ref


def _needs_lock(array: np.ndarray) -> bool:
    # A read-only array that owns its memory and is not in the table is read-only for good.
    return array.base is not None or array.flags.writeable or id(array) in _locked


def unlock_saved(node: Any) -> None:
    """Give back what `node` locked (it is being released by backward)."""
    ref = node.__dict__.pop("_lock_ref", None)
    if ref is not None:
        _table_lock.acquire()
        try:
            _unlock(_holders.pop(ref, None))
        finally:
            _release_table()


def _node_collected(ref: weakref.ref) -> None:
    # A graph dropped without backward must not leave its arrays read-only. A collection can
    # run at any allocation, even while this thread holds the table: then it waits in the queue.
    if _table_lock.acquire(blocking=False):
        try:
            _unlock(_holders.pop(ref, None))
        finally:
            _release_table()
    else:
        _collected.append(ref)


def _release_table() -> None:
    """Let go of the table, first unlocking nodes collected while it was held."""
    while True:
        while _collected:
            _unlock(_holders.pop(_collected.popleft(), None))
        _table_lock.release()
        if not _collected or not _table_lock.acquire(blocking=False):
            return


def _unlock(held: tuple | None) -> None:
    if held is None:
        return
    arrays, holder = held
    for array in arrays:
        for target in reversed(_memory_of(array)):  # the owner first: see _waiting
            entry = _locked.get(id(target))
            if entry is None or holder not in entry[1]:
                continue
            entry[1].remove(holder)
            if not entry[1]:
                del _locked[id(target)]
                _make_writable(target)


def _make_writable(array: np.ndarray) -> None:
    if array.base is not None:
        owner = _memory_of(array)[-1]
        if owner is not array and not owner.flags.writeable:
            if id(owner) in _locked:  # another live node still holds the memory
                _waiting.setdefault(id(owner), []).append(array)
            return  # (an owner someone else made read-only keeps its views read-only too)
    array.setflags(write=True)
    for view in _waiting.pop(id(array), ()):
        if id(view) not in _locked:
            view.setflags(write=True)


def saved_by(array: np.ndarray) -> list[str]:
    """Names of the live graph ops that saved `array` (or memory it shares) for backward."""
    for target in _memory_of(np.asarray(array)):
        entry = _locked.get(id(target))
        if entry:
            return [holder.op for holder in list(entry[1])]
    return []


def locked_count() -> int:
    """How many arrays live graphs hold read-only right now."""
    return len(_locked)


# ------------------------------------------------------------ the note on the read-only error
def _ops_text(ops: list[str]) -> str:
    counts: dict[str, int] = {}
    for op in ops:
        counts[op] = counts.get(op, 0) + 1
    return ", ".join(op if n == 1 else f"{op} ({n} times)" for op, n in counts.items())


def _held_text(text: str, entry: list) -> str:
    array, holders = entry
    names = {h.names[id(array)] for h in holders if id(array) in h.names}
    names.discard(text.removesuffix(".data"))
    also = f" (the data of {', '.join(repr(n) for n in sorted(names))})" if names else ""
    ops = _ops_text([h.op for h in holders])
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
    held = {id(entry[0]): entry for entry in list(_locked.values())}
    found, seen = [], set()
    for text, array in candidates:
        entry = next((held[id(t)] for t in _memory_of(array) if id(t) in held), None)
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


def add_note(exc: BaseException, note: str) -> None:
    """Attach `note` to `exc` once (as an exception note; Python 3.10: in the message)."""
    if any(n.startswith(_NOTE_PREFIX) for n in getattr(exc, "__notes__", ())):
        return
    if hasattr(exc, "add_note"):
        exc.add_note(note)
    else:
        exc.args = (f"{exc.args[0] if exc.args else ''}\n{note}",) + tuple(exc.args[1:])


class _Excepthook:
    """Adds the read-only note to an uncaught error, then hands it to the previous hook."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, exc_type: type, exc: BaseException, tb: Any) -> None:
        try:
            if exc is not None:
                note = explain_read_only(exc.with_traceback(tb))
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
