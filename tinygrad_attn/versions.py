"""Version counters: which memory an in-place op wrote, and when, so that backward can refuse to
use an array that was changed after a node saved it.

Nodes are numbered as they are made (`sequence`, also used by the engine as its order). Every
in-place write on a tensor (`add_`, `x[i] = v`, `+=`, an optimizer's step, ...) calls `bump` with
the array it wrote: the memory's owner (the ndarray at the bottom of its chain of views) gets its
version raised by one and is stamped with a fresh number from the same sequence. A node that
saved an array of that memory before the write has a smaller number than the stamp, and that is
the whole test: `check_saved` runs when a backward reads `ctx.saved_tensors`, and only when some
write happened after the node was made (`last_write`), so a graph with no in-place op pays one
comparison per node.

As in PyTorch, a tensor's views share its version (they share its memory); unlike PyTorch, two
tensors made from the same ndarray (`ta.from_numpy(a)` twice, `.data`) share it too, since the
test is by memory: a write that would change a saved array is never missed because it came
through another tensor. A write straight into the ndarray (`t.numpy()[0] = 1`) goes around every
tensor and is not seen (in PyTorch neither: `t.detach().numpy()`); anomaly mode checksums the
saved arrays and catches that too (debug.py).

This module must not know about ops, tensors or the engine: it sees arrays and nodes.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

# Node numbers and write stamps come from one counter, so "written after this node was made"
# is one comparison of two numbers.
sequence = itertools.count()

# The stamp of the most recent in-place write anywhere (-1: none yet). A node made after it can
# skip the check.
last_write = -1

# id(owner ndarray) -> [weak reference to the owner, version, stamp of its last write]
_writes: dict[int, list] = {}


def owner(array: np.ndarray) -> np.ndarray:
    """The ndarray that owns `array`'s memory: the bottom of its chain of views (through the
    holder object NumPy's as_strided puts between a view and its array, too)."""
    while True:
        base = array.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)  # (as_strided's DummyArray)
            if not isinstance(base, np.ndarray):
                return array
        array = base


def _entry(array: np.ndarray) -> list | None:
    """The write record of `array`'s memory, if any write was recorded."""
    base = owner(array)
    entry = _writes.get(id(base))
    return entry if entry is not None and entry[0]() is base else None


def bump(array: np.ndarray) -> None:
    """Record an in-place write into `array` (or the memory it views)."""
    global last_write
    base = owner(array)
    key = id(base)
    entry = _writes.get(key)
    if entry is None or entry[0]() is not base:
        ref = weakref.ref(base, lambda r, key=key: _forget(key, r))
        entry = _writes[key] = [ref, 0, -1]
    entry[1] += 1
    entry[2] = last_write = next(sequence)


def _forget(key: int, ref: weakref.ref) -> None:
    entry = _writes.get(key)
    if entry is not None and entry[0] is ref:  # (not a newer array that reuses the id)
        del _writes[key]


def version(array: np.ndarray) -> int:
    """How many in-place writes `array`'s memory has had (PyTorch's `t._version`)."""
    entry = _entry(array)
    return 0 if entry is None else entry[1]


def check_saved(node: Any, saved: tuple) -> None:
    """Raise if an array `node` saved was written in place after `node` was made: its gradient
    would be computed from values it never saw. Called only when some write came later."""
    for position, array in enumerate(saved):
        if not isinstance(array, np.ndarray):
            continue
        entry = _entry(array)
        if entry is not None and entry[2] > node.sequence:
            raise RuntimeError(_modified_message(node, position, array, entry[1]))


def _modified_message(node: Any, position: int, array: np.ndarray, now: int) -> str:
    role = _role(node, array)
    return (
        f"backward(): {node.name} saved {role} (shape {array.shape}, {array.dtype}) for its "
        f"gradient, and that array was changed in place after {node.name} ran (its memory is at "
        f"version {now} now). One of the variables needed for gradient computation has been "
        "modified by an inplace operation, so backward would compute a wrong gradient. Do the "
        "in-place change after backward(), or use the out-of-place form (y = x.add(1) instead "
        "of x.add_(1), x = x * 2 instead of x *= 2), or .clone() the tensor before changing it."
        + (f" The op was created at {node.creation_site}." if node.creation_site else "")
    )


def _role(node: Any, array: np.ndarray) -> str:
    """Which of the node's tensors the saved array belongs to, in words."""
    base = owner(array)
    output, changed = _tensor_of(node)
    if output is not None and owner(output._data) is base:
        return f"its output{_named(output)}{changed}"
    for i, parent in enumerate(getattr(node, "parents", ())):
        tensor, changed = _tensor_of(parent)
        if tensor is not None and owner(tensor._data) is base:
            return f"its input {i}{_named(tensor)}{changed}"
    return "an array"


def _tensor_of(made: Any) -> tuple:
    """The tensor a node made (or a leaf), following it through in-place changes, and the
    words that say it was changed ("" if not)."""
    if not hasattr(made, "output_ref"):  # a leaf tensor
        return made, ""
    tensor, changed = made.output_ref(), ""
    while tensor is None and getattr(made, "overwritten_by", None) is not None:
        made = made.overwritten_by
        tensor, changed = made.output_ref(), f" (then changed by {made.inplace})"
    return tensor, changed


def _named(tensor: Any) -> str:
    return f" {tensor._name!r}" if tensor._name else ""
