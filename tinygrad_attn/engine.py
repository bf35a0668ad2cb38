"""The backward engine: one loop, and one place where gradients add up.

`backward_steps(root)` is the whole algorithm, as a generator. Every node has a number, given in
the order nodes were made (function.py), so a node's number is larger than those of the nodes
that made its inputs. The loop keeps the nodes that have received a gradient in a heap and always
takes the one with the largest number: by then every node that used its output has run, so its
gradient is complete. It calls the op's `backward` and hands the returned gradients to
`accumulate`, which sums each to its input's shape (un-broadcasting) and adds it where it
belongs: into a leaf's `.grad`, or to the gradient waiting at the node that made the input.
`Tensor.backward()` just exhausts this generator, so stepping through it in a debugger, or
`for step in loss.backward_steps()`, runs exactly the same code.

Hooks, `retain_grad`, observers (anomaly mode, tracing) and error checks live in the helpers
below the loop, and cost one flag test per node when unused. So do the two other ways a pass
runs: with `create_graph=True` the gradients are Tensors and each op's backward is recorded as
ops of a new graph (`Function.backward_graph`), so it can be differentiated again; for
`autograd.grad(outputs, inputs)` the gradients of `inputs` are handed back instead of going
into `.grad`, and only the nodes on a path to them run. This module must not know any op's
calculus, nor build graph nodes (function.py does).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from itertools import compress
from typing import Any

import numpy as np

from . import tensor as _tensor  # (tensor.py imports this module first; read at call time)
from .backward_checks import (
    check_arity,
    checked_hook_result,
    integer_input,
    position,
    root_gradient,
)
from .function import Function
from .graph import BackwardStep, graph_order, topological_order  # noqa: F401  (the readers)
from .higher_order import run_tensor_backward
from .state import enable_grad, observers


def backward_steps(
    roots: Any, gradients: Any = None, retain_graph: bool = False, create_graph: bool = False,
    capture: dict | None = None,
) -> Iterator:  # fmt: skip
    """Run the backward pass from `roots` (a tensor, or several), yielding per node the tuple
    `(node, grad_output, returned)` (`Tensor.backward_steps` numbers each and hands it out as a
    `BackwardStep`)."""
    run = start(roots, gradients, create_graph, capture)  # the pass: what waits where (`Pass`)
    ready, grads, careful = run.ready, run.grads, run.careful
    ran = []  # the nodes that ran: released together once the pass is complete (`finish`)
    while ready:
        node = heapq.heappop(ready)[1]  # largest number left: all its consumers have run
        grad_out = grads.pop(node)
        if node.watched or careful or observers.active:  # see watched_backward
            grad_out, grad_inputs = watched_backward(node, grad_out, run)
        else:  # the op's calculus (one gradient per input), each handed to its input
            grad_inputs = accumulate(node, node.backward(node, grad_out), run)
        ran.append(node)
        yield node, grad_out, grad_inputs
    finish(run, () if retain_graph else ran)


class Pass:
    """One backward pass: `grads` maps each node (and some leaves) to the gradient that has
    arrived at its output, `ready` is the heap of nodes to run. `create_graph`: the gradients
    are Tensors and their ops are recorded; `capture`: for `autograd.grad`, the inputs (a leaf,
    or the node that made a non-leaf) whose gradients are handed back, `needed` the nodes on a
    path to them; `careful`: whether every node goes through `watched_backward`."""

    __slots__ = ("grads", "ready", "create_graph", "capture", "needed", "through", "careful")

    def __init__(self, create_graph: bool, capture: dict | None, paths: tuple) -> None:
        self.grads, self.ready = {}, []
        self.create_graph, self.capture = create_graph, capture
        self.needed, self.through = paths  # (None, None: every node runs)
        self.careful = create_graph or capture is not None


def accumulate(node: Function, grad_inputs: Any, run: Pass) -> tuple:
    """THE place gradients add up. Each input of `node` that needs a gradient (`compress` skips
    the others) gets its entry of `grad_inputs` (one per input: checked for a user's op), summed
    to the input's shape (un-broadcasting) and cast to its dtype, then added where it belongs:
    to the gradient waiting at the node that made the input (its first one puts that node on
    the heap), or to a leaf's `.grad`. Returns `grad_inputs` as a tuple."""
    if node._checks_fields:  # a user's op
        grad_inputs = check_arity(node, grad_inputs)
    for parent, grad in compress(zip(node.parents, grad_inputs), node.needs_input_grad):
        if grad.__class__ is not np.ndarray or (grad.shape, grad.dtype) != parent.grad_like:
            grad = fit(grad, parent, node)  # broadcast axes summed out, the input's dtype
            if grad is None:
                continue
        if parent in run.grads:  # a node that already has a gradient, or a leaf with hooks
            run.grads[parent] = run.grads[parent] + grad
        elif isinstance(parent, Function):  # its first gradient: it joins the heap
            run.grads[parent] = grad
            heapq.heappush(run.ready, (-parent.sequence, parent))
        elif parent._hooks or run.capture is not None:  # they see its total, once: `finish`
            run.grads[parent] = grad
        else:
            add_to_grad(parent, grad)
    return grad_inputs


# ------------------------------------------------------------------- helpers of the loop
def start(roots: Any, gradients: Any, create_graph: bool, capture: dict | None) -> Pass:
    """The pass, with each root's gradient waiting at its node (at a leaf root: see `finish`).
    `capture` (autograd.grad) maps where each input's gradient arrives (`key`) to None, to be
    filled in."""
    if not isinstance(roots, (list, tuple)):  # one root, and its gradient (which may be a list)
        roots, gradients = [roots], [gradients]
    elif gradients is None:
        gradients = [None] * len(roots)
    paths = (None, None) if capture is None else _paths([r.grad_fn for r in roots], capture)
    run = Pass(create_graph, capture, paths)
    needed = run.needed
    for root, gradient in zip(roots, gradients, strict=True):
        grad_root, node = root_gradient(root, gradient, create_graph), root.grad_fn
        if node is not None and needed is not None and node not in needed:
            continue  # (autograd.grad: this output does not depend on any input)
        key = root if node is None else node  # (a leaf: `finish` gives it the gradient)
        if key in run.grads:
            run.grads[key] = run.grads[key] + grad_root
            continue
        run.grads[key] = grad_root
        if node is None:
            continue
        if node.released:
            raise RuntimeError(
                f"backward(): the graph was already released by an earlier backward() (reached "
                f"{node.name}, output shape {node.output_shape}). Pass retain_graph=True to "
                "the first backward() to run backward through the same graph twice, or "
                "recompute the forward pass."
            )
        heapq.heappush(run.ready, (-node.sequence, node))
    return run


def key(t: Any) -> Any:
    """Where a tensor's gradient arrives: the node that made it, or the leaf itself."""
    return t if t.grad_fn is None else t.grad_fn


def _paths(root_nodes: list, capture: dict) -> tuple:
    """(needed, through) for autograd.grad: the nodes on some path from a root to a captured
    input (the only ones whose gradient is gathered), and those of them whose own backward must
    run (a parent of theirs is needed or captured; a captured node with none ends its path)."""
    through = set()
    for node in graph_order([n for n in root_nodes if n is not None]):  # (inputs come first)
        if any(p in capture or p in through for p in node.parents):
            through.add(node)
    return through | {n for n in capture if isinstance(n, Function)}, through


def finish(run: Pass, ran: list | tuple) -> None:
    """Leaves with hooks (and a leaf root, and autograd.grad's leaves) get their gradient last,
    each hook seeing the total; then the nodes that `ran` free what they saved (their
    structure stays, for drawing). Until then the graph is whole: a pass stopped early, or by
    an error, can run again."""
    for leaf, grad in run.grads.items():
        for hook in leaf._hooks or ():  # (a leaf root may have none)
            grad = call_hook(hook, grad, leaf.name or "a leaf")
        if run.capture is None:
            add_to_grad(leaf, grad)
        elif leaf in run.capture:
            run.capture[leaf] = grad
    Function.release(ran)


def watched_backward(node: Function, grad_out: Any, run: Pass) -> tuple:
    """The op's backward and `accumulate`, with what watches them: hooks on the node's output and
    `retain_grad` first, then observers before and after the backward (after: before anything
    is handed out, so a check that raises leaves every `.grad` untouched), and the check that
    the backward returned one gradient per input. With `create_graph` the op's backward runs as
    recorded Tensor ops (`Function.backward_graph`). Returns (grad_out, grad_inputs) as the
    loop has them."""
    if run.needed is not None and node not in run.needed:  # (autograd.grad: on no path)
        return grad_out, (None,) * len(node.parents)
    for hook in node.output_hooks:
        grad_out = call_hook(hook, grad_out, f"the output of {node.name}")
    if node.retains_output_grad and node.output_ref() is not None and run.capture is None:
        add_to_grad(node.output_ref(), grad_out)
    if run.capture is not None and node in run.capture:  # autograd.grad's non-leaf input
        run.capture[node] = grad_out
        if node not in run.through:  # (no other input lies below it: its path ends here)
            return grad_out, (None,) * len(node.parents)
    for callback in observers.before_backward:
        callback(node, _array(grad_out))
    if run.create_graph:  # (the gradient's ops are recorded: a graph of their own)
        with enable_grad(), observers.making(f"{node.name}.backward", node.scope):
            grad_inputs = check_arity(node, node.backward_graph(node, grad_out))
    elif node.tensor_backward:  # (a user's backward written with Tensor ops)
        grad_inputs = check_arity(node, run_tensor_backward(node, grad_out))
    else:
        grad_inputs = check_arity(node, node.backward(node, grad_out))  # (observers see a tuple)
    for callback in observers.on_backward:
        callback(node, _array(grad_out), tuple(map(_array, grad_inputs)))
    if run.create_graph:
        with enable_grad(), observers.making("accumulate", node.scope):
            return grad_out, accumulate(node, grad_inputs, run)
    return grad_out, accumulate(node, grad_inputs, run)


def _array(grad: Any) -> Any:
    """A gradient as observers see it: an ndarray (a Tensor's array in create_graph mode)."""
    return grad._data if isinstance(grad, _tensor.Tensor) else grad


def call_hook(hook: Any, grad: np.ndarray, where: str) -> np.ndarray:
    """`hook(grad)`, given the gradient as a Tensor (as PyTorch's hooks get it); a Tensor (or
    array) it returns replaces the gradient, None keeps it."""
    tensor = grad if isinstance(grad, _tensor.Tensor) else _tensor.Tensor._make(grad)
    hooked = hook(tensor)
    if hooked is None:
        return grad
    checked = checked_hook_result(hooked, _array(grad), hook, where)
    return hooked if isinstance(grad, _tensor.Tensor) else checked  # (create_graph: a Tensor)


def fit(grad: Any, parent: Any, node: Function) -> np.ndarray | None:
    """`grad` as an ndarray (a Tensor in create_graph mode) of the input's shape (summing out
    broadcast axes) and dtype."""
    if grad is None:  # no gradient flows to this input
        return None
    shape, dtype = parent.grad_like
    if grad.__class__ is not np.ndarray:
        if isinstance(grad, _tensor.Tensor):  # create_graph: the same, as recorded Tensor ops
            grad = sum_to_shape(grad, shape, node, parent) if grad.shape != shape else grad
            return grad if grad.dtype == dtype else grad.to(dtype)
        grad = np.asarray(grad)
        if grad.dtype.kind not in "fiub":
            raise TypeError(
                f"{node.name}.backward returned {grad.dtype} data for input "
                f"{position(node, parent)}; a gradient must be a float array (or a number)."
            )
    if grad.shape != shape:
        grad = sum_to_shape(grad, shape, node, parent)
    if grad.dtype != dtype:
        grad = grad.astype(dtype) if dtype.kind == "f" else integer_input(parent, node)
    return grad


def sum_to_shape(grad: np.ndarray, shape: tuple, node: Any, parent: Any) -> np.ndarray:
    """Undo broadcasting: sum `grad` over the axes that broadcasting added or stretched."""
    lead = grad.ndim - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, grad.shape[lead:])):
        raise RuntimeError(
            f"{node.name}.backward returned a gradient of shape {grad.shape} for input "
            f"{position(node, parent)}, whose shape is {shape}; the shapes do not broadcast. A "
            "backward must return, per input, an array of that input's shape or of the "
            "broadcast output shape."
        )
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    axes = tuple(range(lead)) + stretched
    if isinstance(grad, _tensor.Tensor):  # (create_graph; `sum(dim=())` would sum all)
        return (grad.sum(dim=axes) if axes else grad).reshape(shape)
    return np.asarray(grad.sum(axis=axes)).reshape(shape)


def add_to_grad(tensor: Any, grad: Any) -> None:
    """`tensor.grad += grad` (a Tensor), where the first gradient is copied: it may be an op's
    or the caller's array, and later accumulation must not write into it. A gradient with a
    graph (create_graph) is added as a recorded op, out of place."""
    if isinstance(grad, _tensor.Tensor):
        tensor._grad = grad if tensor._grad is None else tensor._grad + grad
    elif tensor._grad is None:
        tensor._grad = _tensor.Tensor._make(grad.copy())
    else:
        tensor._grad._data += grad
