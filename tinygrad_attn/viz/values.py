"""Keeping the values a picture shows after backward released the graph.

`backward()` frees every intermediate array (as PyTorch does), so a picture drawn after a
training step would have no Q, K, V, scores or weights to show. Inside

    with viz.keep_values():
        loss = head_loss(...)
        loss.backward()
    viz.render_graph(loss, path="step.svg", show_values=True, show_grads=True)

every op made records a reference to its output array (the read-only array the forward pass
made anyway: no copy) and, during backward, the gradient that reached that output. They are
kept per graph node, weakly: when the program drops the graph, the arrays go with it. Outside
the block nothing is recorded and nothing is paid: the observers are installed only while a
block is open, in the thread that opened it.

This module only observes (through the engine's observer callbacks); it changes no node,
tensor or gradient.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..state import observers  # per thread, like the blocks that install them

# node -> its output array / the gradient that reached its output (weak: dies with the graph)
_values: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_grads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Open(threading.local):
    count = 0  # how many keep_values blocks this thread has open (they nest)


_open = _Open()


def _on_forward(node, inputs, out) -> None:
    if out.grad_fn is node:  # a recorded node (not a no_grad computation)
        _values[node] = out._data


def _on_backward(node, grad_out, grad_inputs) -> None:
    if node in _values:
        _grads[node] = grad_out


@contextmanager
def keep_values() -> Iterator[None]:
    """Record, for every op made inside the block, its output and the gradient backward sends
    it, so a picture drawn later (`show_values=True`, `show_grads=True`) shows them even
    though backward released the graph. Costs nothing outside the block."""
    if _open.count == 0:
        observers.on_forward.append(_on_forward)
        observers.on_backward.append(_on_backward)
        observers.update()
    _open.count += 1
    try:
        yield
    finally:
        _open.count -= 1
        if _open.count == 0:
            observers.on_forward.remove(_on_forward)
            observers.on_backward.remove(_on_backward)
            observers.update()


def kept_value(node) -> np.ndarray | None:
    """The output array `node` made, if it was made inside `keep_values()`."""
    return _values.get(node)


def kept_grad(node) -> np.ndarray | None:
    """The gradient backward sent to `node`'s output, if recorded by `keep_values()`."""
    return _grads.get(node)
