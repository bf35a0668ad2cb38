"""Function: the graph node, and the ONLY place graph nodes are made.

A built-in op and a user's op are written the same way: a subclass of `Function` with two
static methods, `forward(ctx, *arrays, **params) -> ndarray` and `backward(ctx, grad_out) ->
tuple`. `Op.apply(*tensors, **params)` runs `forward` on the tensors' arrays and, when a gradient
is wanted, records the node: the node *is* the ctx, so in a debugger `ctx.inputs`,
`ctx.saved_tensors` and the op's own attributes (`ctx.axis`, ...) are all on one object.

This module must not do calculus (ops do), walk the graph (the engine does) or accumulate
gradients (only the engine does). Grad mode (`no_grad`) and the few hooks that debugging tools
plug into (anomaly mode, tracing, module scopes) live here because `apply` reads them.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from .tensor import ReleasedTensor, Tensor, as_constant


class _GradMode(threading.local):
    enabled = True


_grad_mode = _GradMode()


def is_grad_enabled() -> bool:
    """True unless inside `no_grad()` (per thread, as in PyTorch)."""
    return _grad_mode.enabled


class _SetGradMode:
    """Context manager and decorator that sets grad mode for the current thread."""

    mode = True

    def __enter__(self) -> None:
        self._previous = _grad_mode.enabled
        _grad_mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        _grad_mode.enabled = self._previous

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.__class__():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_SetGradMode):
    """`with ta.no_grad():` (or `@ta.no_grad()`) runs ops without recording a graph."""

    mode = False


class enable_grad(_SetGradMode):
    """`with ta.enable_grad():` records a graph again inside a `no_grad` block."""

    mode = True


class GraphObservers:
    """Callbacks that debugging tools (`debug.py`) install; empty lists cost one check per op.

    `on_forward(node, inputs, out)` runs after each forward (`node` is the ctx, even when no
    graph is recorded), `before_backward(node, grad_out)` just before an op's backward and
    `on_backward(node, grad_out, grad_inputs)` after it. `record_sites` asks `apply` to note
    where each node was created. `scope` is the stack of module names being called (for graph
    clusters).
    """

    def __init__(self) -> None:
        self.on_forward: list[Callable] = []
        self.before_backward: list[Callable] = []
        self.on_backward: list[Callable] = []
        self.record_sites = 0
        self.scope: list[str] = []


observers = GraphObservers()
_creation_site: Callable[[], str | None] = lambda: None  # noqa: E731  (debug.py replaces it)


def set_creation_site_finder(finder: Callable[[], str | None]) -> None:
    """Install the function that says where (file:line) user code created a node."""
    global _creation_site
    _creation_site = finder


# Writing into an array that a graph saved for backward would silently corrupt the gradients,
# so such writes must fail. Two rules make them fail:
# 1. every op's result is read-only from birth (like a JAX array; copy it to change it) — so the
#    intermediate values a graph saves cannot be written, at no bookkeeping cost;
# 2. an array the user owns (a leaf's data, or the memory a view of it shares) is made read-only
#    while a live node has it saved, and writable again when the last such node is released or
#    garbage-collected. `_locked` maps id(array) -> the op names of the live nodes that saved it
#    (one entry per node, so `saved_by` can name them).
_locked: dict[int, list[str]] = {}
# id(owner) -> views whose lock ended while their owner was still locked by another node: NumPy
# refuses to make a view writable while the array it views is read-only, so they wait for it.
_waiting: dict[int, list] = {}


def _memory_of(array: np.ndarray) -> tuple:
    """The array and, if it is a view, the array that owns its memory."""
    owner = array
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    return (array,) if owner is array else (array, owner)


def saved_by(array: np.ndarray) -> list[str]:
    """Names of the live graph ops that saved `array` (or memory it shares) for backward."""
    for target in _memory_of(array):
        entry = _locked.get(id(target))
        if entry:
            return list(entry)
    return []


def _lock_saved(arrays: tuple, op: str) -> tuple:
    """Lock what needs locking among the arrays a node saved; returns the ones locked."""
    locked = []
    for array in arrays:
        if not isinstance(array, np.ndarray):
            continue
        if array.base is None and not array.flags.writeable and id(array) not in _locked:
            continue  # read-only for good: an op's result or a constant (rule 1)
        _lock(array, op)
        locked.append(array)
    return tuple(locked)


def _lock(array: np.ndarray, op: str) -> None:
    for target in _memory_of(array):
        entry = _locked.get(id(target))
        if entry is not None:
            entry.append(op)
        elif target.flags.writeable:
            target.setflags(write=False)
            _locked[id(target)] = [op]


def _unlock(array: np.ndarray, op: str) -> None:
    for target in reversed(_memory_of(array)):  # the owner first: see _waiting
        entry = _locked.get(id(target))
        if entry is None:
            continue
        entry.remove(op)
        if not entry:
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
    if _waiting:
        for view in _waiting.pop(id(array), ()):
            if id(view) not in _locked:
                view.setflags(write=True)


class Function:
    """Base class of every op; an instance is one node of the graph (and the op's ctx).

    Subclass it with static `forward(ctx, *arrays, **params)` and `backward(ctx, grad_out)`
    and call `MyOp.apply(*tensors, **params)`. Attributes a node keeps:

    - `parents`: one entry per input, in order (a tuple: `x * x` has two edges to `x`): the
      producing `Function` for an intermediate tensor, the tensor itself for a leaf. The graph
      holds intermediates' arrays only if an op saved them, so memory is freed as early as
      PyTorch frees it;
    - `inputs`: the input tensors, in order: the live tensor, or (once it is gone) a
      `ReleasedTensor` with its name, shape and dtype but no data;
    - `needs_input_grad`: one bool per input;
    - `saved_tensors`: what forward saved with `save_for_backward` (freed after backward);
    - `output`: the tensor this node made (or what the graph keeps of it once released);
    - `creation_site`: "file:line" of the user's code (recorded in anomaly/debug mode);
    - `scope`: the module path being called when the node was made (e.g. "attn.query").
    """

    parents: tuple
    needs_input_grad: tuple
    creation_site: str | None = None
    scope: str | None = None
    released: bool = False
    _locks: tuple = ()  # the saved arrays this node locked (rule 2 above)
    output_name: str | None = None
    output_hooks: tuple = ()
    retains_output_grad: bool = False
    _saved: tuple = ()

    @staticmethod
    def forward(ctx: Function, *arrays: np.ndarray, **params: Any) -> np.ndarray:
        raise NotImplementedError("a Function subclass must define forward(ctx, *arrays)")

    @staticmethod
    def backward(ctx: Function, grad_out: np.ndarray) -> tuple:
        raise NotImplementedError("a Function subclass must define backward(ctx, grad_out)")

    @property
    def name(self) -> str:
        """The op's name: its class name (the label in graphs and error messages)."""
        return type(self).__name__

    def save_for_backward(self, *arrays: Any) -> None:
        """Keep `arrays` for backward; they stay read-only until the graph is released."""
        if self._recording:
            self._saved = arrays

    @property
    def saved_tensors(self) -> tuple:
        """The arrays forward saved (named as in PyTorch, though they are ndarrays)."""
        if self.released:
            raise RuntimeError(
                f"{self.name}: the arrays it saved for backward were freed by an earlier "
                "backward(). Pass retain_graph=True to the first backward() to run backward "
                "through this graph again."
            )
        return self._saved

    @classmethod
    def apply(cls, *inputs: Any, **params: Any) -> Tensor:
        """Run `forward` on the inputs' arrays; record a node if any input requires grad."""
        for t in inputs:
            if t.__class__ is not Tensor:  # a user's op may pass Python numbers or ndarrays
                inputs = tuple(as_constant(t) for t in inputs)
                break
        ctx = cls.__new__(cls)
        needs = [t.requires_grad for t in inputs]  # (a list comprehension: cheapest here)
        ctx._recording = recording = True in needs and _grad_mode.enabled
        arrays = [t.data for t in inputs]
        out = cls.forward(ctx, *arrays, **params)
        if out.__class__ is not np.ndarray:
            returned, out = out, np.asarray(out)
            if out.dtype.kind not in "fiub":  # e.g. None: a forward that forgot `return`
                raise TypeError(
                    f"{cls.__name__}.forward returned {type(returned).__name__}; forward must "
                    "return an ndarray of numbers (did it forget `return`?)"
                )
        for array in arrays:
            if out is array:  # an identity op must not make its input read-only
                out = out.view()
                break
        out.setflags(write=False)  # see the note on read-only arrays above
        result = Tensor._make(out)
        if recording:
            if ctx._saved:
                ctx._locks = _lock_saved(ctx._saved, cls.__name__)
            ctx.parents = tuple([t.grad_fn or t for t in inputs])
            ctx.needs_input_grad = tuple(needs)
            ctx.output_ref = weakref.ref(result)
            ctx.output_shape = out.shape
            ctx.output_dtype = out.dtype
            if observers.scope:
                ctx.scope = observers.scope[-1]
            if observers.record_sites:
                ctx.creation_site = _creation_site()
            result.requires_grad = True
            result.grad_fn = ctx
        if observers.on_forward:
            for callback in observers.on_forward:
                callback(ctx, inputs, result)
        return result

    @property
    def inputs(self) -> tuple:
        """The input tensors, in order (a `ReleasedTensor` for an intermediate that is gone)."""
        return tuple(p if isinstance(p, Tensor) else p.output for p in self.parents)

    @property
    def output(self) -> Tensor | ReleasedTensor:
        """The tensor this node made, or (once it is gone) what the graph keeps of it."""
        tensor = self.output_ref()
        return tensor if tensor is not None else self.released_output()

    def released_output(self) -> ReleasedTensor:
        """The data-less record of this node's output that a released graph keeps."""
        record = self.__dict__.get("_released_output")
        if record is None:
            tensor = self.output_ref()
            name = tensor.name if tensor is not None else self.output_name
            record = ReleasedTensor(self.output_shape, self.output_dtype, name, self)
            self._released_output = record
        return record

    def _unlock_saved(self) -> None:
        op = type(self).__name__
        for array in self._locks:
            _unlock(array, op)
        self._locks = self._saved = ()

    def __del__(self) -> None:
        # A graph dropped without backward must not leave its arrays read-only.
        if self._locks:
            self._unlock_saved()

    def release(self) -> None:
        """Free the arrays this node saved; its structure (parents, shapes, names) stays."""
        if not self.released:
            if self._locks:
                self._unlock_saved()
            self._saved = ()
            self.released = True

    def __repr__(self) -> str:
        shapes = ", ".join(str(tuple(t.shape)) for t in self.inputs)
        return f"<{self.name} node: ({shapes}) -> {tuple(self.output_shape)}>"
