"""What the core reads besides the graph: grad mode, the observers debugging tools plug into, the
default float dtype and the global random generator.

`no_grad()` / `enable_grad()` turn graph recording off and on (as PyTorch's grad_mode.py), and
`observers` holds the callbacks that anomaly mode, op tracing, module scopes and the graph
recorder install. Both are per thread: a thread inside `no_grad()` or `detect_anomaly()` changes
nothing for another thread.

Grad mode and the observers are per thread; the default dtype and the generator (`manual_seed`)
are one per process, as in PyTorch. This module imports nothing from the package, so any module
may import it; it must not hold anything that reads or builds the graph.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


class _GradMode(threading.local):
    enabled = True


grad_mode = _GradMode()


def is_grad_enabled() -> bool:
    """True unless inside `no_grad()` (per thread, as in PyTorch)."""
    return grad_mode.enabled


class _SetGradMode:
    """Context manager and decorator that sets grad mode for the current thread: `with
    no_grad():`, `@no_grad()`, and (as PyTorch 2) `@no_grad` without parentheses."""

    mode = True

    def __new__(cls, orig_func: Callable | None = None) -> Any:
        self = super().__new__(cls)
        if orig_func is None:
            return self
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes no arguments (got {orig_func!r})")
        return self(orig_func)  # `@no_grad` on a function: the wrapped function

    def __init__(self, orig_func: Callable | None = None) -> None:
        pass

    def clone(self) -> _SetGradMode:
        copy = self.__class__()
        copy.__dict__.update(self.__dict__)
        return copy

    def __enter__(self) -> None:
        self._previous = grad_mode.enabled
        grad_mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        grad_mode.enabled = self._previous

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return fn(*args, **kwargs)

        return wrapper


class no_grad(_SetGradMode):
    """`with ta.no_grad():` (or `@ta.no_grad()`) runs ops without recording a graph."""

    mode = False


class enable_grad(_SetGradMode):
    """`with ta.enable_grad():` records a graph again inside a `no_grad` block."""

    mode = True


class inference_mode(_SetGradMode):
    """`with ta.inference_mode():` (or `@ta.inference_mode()`): as `no_grad` here (PyTorch's
    extra speed-up of inference tensors has no counterpart); `inference_mode(False)` is a
    no-op, as in PyTorch."""

    mode = False

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):
            return super().__new__(cls, mode)
        self = super().__new__(cls)
        self._on = bool(mode)
        return self

    def __init__(self, mode: Any = True) -> None:
        pass

    def __enter__(self) -> None:
        self._previous = grad_mode.enabled
        if getattr(self, "_on", True):
            grad_mode.enabled = False


class set_grad_enabled(_SetGradMode):
    """`ta.set_grad_enabled(False)`: sets grad mode now (a function call, as in PyTorch), and as
    `with ta.set_grad_enabled(flag):` only inside the block."""

    def __new__(cls, mode: Any) -> Any:
        self = object.__new__(cls)
        self._previous = grad_mode.enabled
        self.mode = bool(mode)
        grad_mode.enabled = self.mode  # (in effect at once, as PyTorch's)
        return self

    def __init__(self, mode: Any) -> None:
        pass

    def __enter__(self) -> None:
        grad_mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        grad_mode.enabled = self._previous

    def clone(self) -> set_grad_enabled:
        previous = grad_mode.enabled
        copy = self.__class__(self.mode)
        copy._previous = grad_mode.enabled = previous  # (made for entering later: no effect now)
        return copy

    def __call__(self, fn: Callable) -> Callable:
        grad_mode.enabled = self._previous  # a decorator, not a call: undo the immediate effect
        return super().__call__(fn)


def is_inference_mode_enabled() -> bool:
    """False: inference mode is `no_grad` here, and leaves no mark of its own."""
    return False


def _no_site() -> str | None:
    return None


class GraphObservers(threading.local):
    """What watches the graph being made, per thread: callbacks that debugging tools install
    and the module being called. `active` is the one flag the core checks, so they cost nothing
    while none is there.

    - `on_forward(node, inputs, out)` runs after each forward (`node` is the ctx, recorded or not);
    - `before_backward(node, grad_out)` just before an op's backward;
    - `on_backward(node, grad_out, grad_inputs)` after it, BEFORE any gradient is accumulated (so
      a check that raises leaves every `.grad` untouched; `grad_inputs` are as the op returned);
    - `record_sites` > 0 asks `apply` to note where user code created each node, with
      `site_finder()` ("file.py:12 in fn");
    - `scope`: the stack of module paths being called (graph clusters name their module),
      changed with `push_scope` / `pop_scope`, which keep `active` right;
    - `made_by`: while a backward pass records its own ops (`create_graph=True`), what is
      making them ("Softmax.backward", "accumulate"): each node made then keeps it as
      `node.made_by`, so a picture of a gradient can tell the backward's ops from the forward's.
    """

    def __init__(self) -> None:
        self.on_forward: list[Callable] = []
        self.before_backward: list[Callable] = []
        self.on_backward: list[Callable] = []
        self.record_sites = 0
        self.site_finder: Callable[[], str | None] = _no_site
        self.scope: list[str] = []
        self.made_by: str | None = None
        self.active = False

    def push_scope(self, path: str) -> None:
        """Enter module `path` (the nodes made until `pop_scope()` keep it as `node.scope`)."""
        self.scope.append(path)
        self.active = True

    def pop_scope(self) -> None:
        self.scope.pop()
        self.update()

    @contextlib.contextmanager
    def making(self, what: str, scope: str | None = None) -> Iterator[None]:
        """Mark the nodes made inside the block as made by `what` (`node.made_by`), in the
        module `scope` (the forward op's, so a picture can collapse a module's backward ops
        into one box), whatever module is being called around the backward pass."""
        previous, self.made_by = self.made_by, what
        outer, self.scope = self.scope, [scope] if scope else []
        self.active = True
        try:
            yield
        finally:
            self.made_by, self.scope = previous, outer
            self.update()

    def update(self) -> None:
        """Recompute `active`; call after changing any list, `record_sites` or `scope`."""
        self.active = bool(
            self.on_forward
            or self.before_backward
            or self.on_backward
            or self.record_sites
            or self.scope
            or self.made_by
        )


observers = GraphObservers()


def set_creation_site_finder(finder: Callable[[], str | None]) -> None:
    """Install the function that says where (file:line) user code created a node."""
    observers.site_finder = finder


def _no_explainer(step: Any) -> str:
    return f"{step!r}\n  (import tinygrad_attn.debug for the full explanation)"


_step_explainer: Callable[[Any], str] = _no_explainer


def set_step_explainer(explainer: Callable[[Any], str]) -> None:
    """Install what `BackwardStep.explain()` calls (debug.py installs `explain_step` when it
    is imported, so the engine never imports a debugging tool)."""
    global _step_explainer
    _step_explainer = explainer


def explain_step(step: Any) -> str:
    """The installed explanation of one backward step (see `set_step_explainer`)."""
    return _step_explainer(step)


# ------------------------------------------------------------- default dtype, random generator
_default_dtype = np.dtype(np.float32)
_rng = np.random.default_rng()


def get_default_dtype() -> np.dtype:
    """The dtype given to Python floats and lists of floats (float32 unless changed)."""
    return _default_dtype


def set_default_dtype(dtype: Any) -> None:
    """Set the dtype for Python float data: `ta.set_default_dtype(np.float64)`."""
    global _default_dtype
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: expected a float dtype, got {dtype}")
    _default_dtype = dtype


def manual_seed(seed: int) -> None:
    """Seed the one global random generator (randn, dropout, module initialisation)."""
    global _rng
    _rng = np.random.default_rng(seed)


def get_rng() -> np.random.Generator:
    """The global `np.random.Generator` that `manual_seed` seeds."""
    return _rng
