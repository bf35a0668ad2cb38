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
below the loop, and cost one flag test per node when unused. This module must not know any
op's calculus, nor build graph nodes (function.py does).
"""

from __future__ import annotations

import heapq
import operator
from collections.abc import Iterator
from itertools import compress
from typing import Any, NoReturn

import numpy as np

from . import tensor as _tensor  # (tensor.py imports this module first; read at call time)
from .function import Function
from .state import explain_step, observers


def backward_steps(root: Any, gradient: Any = None, retain_graph: bool = False) -> Iterator:
    """Run the backward pass from `root`, yielding per node the tuple `(node, grad_output,
    returned)` (`Tensor.backward_steps` numbers each and hands it out as a `BackwardStep`)."""
    grads, ready = start(root, gradient)  # grads: node -> the gradient arrived at its output
    ran = []  # the nodes that ran: released together once the pass is complete (`finish`)
    while ready:
        node = heapq.heappop(ready)[1]  # largest number left: all its consumers have run
        grad_out = grads.pop(node)
        if node.watched or observers.active:  # hooks, anomaly checks: see watched_backward
            grad_out, grad_inputs = watched_backward(node, grad_out, grads, ready)
        else:  # the op's calculus (one gradient per input), each handed to its input
            grad_inputs = accumulate(node, node.backward(node, grad_out), grads, ready)
        ran.append(node)
        yield node, grad_out, grad_inputs
    finish(grads, () if retain_graph else ran)


def accumulate(node: Function, grad_inputs: Any, grads: dict, ready: list) -> tuple:
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
        if parent in grads:  # a node that already has a gradient, or a leaf with hooks
            grads[parent] = grads[parent] + grad
        elif isinstance(parent, Function):  # its first gradient: it joins the heap
            grads[parent] = grad
            heapq.heappush(ready, (-parent.sequence, parent))
        elif parent._hooks:  # a leaf with hooks: they see its total gradient, once (`finish`)
            grads[parent] = grad
        else:
            add_to_grad(parent, grad)
    return grad_inputs


class BackwardStep(tuple):
    """What one node of the backward pass did: the tuple `(index, node, grad_output, returned)`
    that `backward_steps()` yields: its position in the pass, the `Function`, the gradient that
    arrived, and what its backward returned (one entry per input, in the broadcast shape).
    `grad_inputs`: what each input received (summed to its shape; None where none flows). Also
    `op` (the op's name), `output`, `inputs`."""

    __slots__ = ()
    index = property(operator.itemgetter(0))
    node = property(operator.itemgetter(1))
    grad_output = property(operator.itemgetter(2))
    returned = property(operator.itemgetter(3))

    @property
    def grad_inputs(self) -> tuple:
        node = self[1]  # (summed again when read: the pass itself keeps no second copy)
        todo = zip(node.parents, node.needs_input_grad, self[3])
        return tuple(fit(g, p, node) if n else None for p, n, g in todo)

    @property
    def op(self) -> str:
        return self.node.name

    @property
    def output(self) -> Any:
        return self.node.output

    @property
    def inputs(self) -> tuple:
        return self.node.inputs

    def __repr__(self) -> str:
        """One line: `step 2: Softmax -> weights (6, 6) |grad_out|=0.41 => scores (6, 6)
        |grad|=0.12` (the output, then each input; `|grad|=-` where no gradient flows)."""
        from .format import step_line  # the one way to print; not part of the core

        return step_line(self)

    __str__ = __repr__

    def explain(self) -> str:
        """Several lines: the op's formula, and the arrays that went in and came out (written
        by debug.py, which installs itself in state.py: the engine imports no debugging tool)."""
        return explain_step(self)

    def __eq__(self, other: object) -> bool:  # steps hold arrays: equal only to themselves
        return self is other

    def __hash__(self) -> int:
        return id(self)


# ------------------------------------------------------------------- helpers of the loop
def start(root: Any, gradient: Any) -> tuple[dict, list]:
    """The gradient of the root, waiting at its node (at a leaf root itself: see `finish`)."""
    grad_root, node = root_gradient(root, gradient), root.grad_fn
    if node is None:  # a leaf: `finish` gives it the gradient (after its hooks, if any)
        return {root: grad_root}, []
    if node.released:
        raise RuntimeError(
            f"backward(): the graph was already released by an earlier backward() (reached "
            f"{node.name}, output shape {node.output_shape}). Pass retain_graph=True to the "
            "first backward() to run backward through the same graph twice, or recompute the "
            "forward pass."
        )
    return {node: grad_root}, [(-node.sequence, node)]


def finish(grads: dict, ran: list | tuple) -> None:
    """Leaves with hooks (and a leaf root) get their gradient last, each hook seeing the total;
    then the nodes that `ran` free what they saved (their structure stays, for drawing). Until
    then the graph is whole: a pass stopped early, or by an error, can run again."""
    for leaf, grad in grads.items():
        for hook in leaf._hooks or ():  # (a leaf root may have none)
            grad = call_hook(hook, grad, leaf.name or "a leaf")
        add_to_grad(leaf, grad)
    Function.release(ran)


def watched_backward(node: Function, grad_out: np.ndarray, grads: dict, ready: list) -> tuple:
    """The op's backward and `accumulate`, with what watches them: hooks on the node's output and
    `retain_grad` first, then observers before and after the backward (after: before anything
    is handed out, so a check that raises leaves every `.grad` untouched), and the check that
    the backward returned one gradient per input. Returns (grad_out, grad_inputs) as the loop
    has them."""
    for hook in node.output_hooks:
        grad_out = call_hook(hook, grad_out, f"the output of {node.name}")
    if node.retains_output_grad and node.output_ref() is not None:
        add_to_grad(node.output_ref(), grad_out)
    for callback in observers.before_backward:
        callback(node, grad_out)
    grad_inputs = check_arity(node, node.backward(node, grad_out))  # (observers see a tuple)
    for callback in observers.on_backward:
        callback(node, grad_out, grad_inputs)
    return grad_out, accumulate(node, grad_inputs, grads, ready)


def call_hook(hook: Any, grad: np.ndarray, where: str) -> np.ndarray:
    """`hook(grad)`, given the gradient as a Tensor (as PyTorch's hooks get it); a Tensor (or
    array) it returns replaces the gradient, None keeps it."""
    hooked = hook(_tensor.Tensor._make(grad))
    return grad if hooked is None else checked_hook_result(hooked, grad, hook, where)


def checked_hook_result(hooked: Any, grad: np.ndarray, hook: Any, where: str) -> np.ndarray:
    """A hook's returned gradient, if it has the gradient's shape; else an error naming both."""
    name = getattr(hook, "__qualname__", None) or repr(hook)
    result = hooked._data if isinstance(hooked, _tensor.Tensor) else np.asarray(hooked)
    if result.shape != grad.shape or result.dtype.kind not in "fiu":
        raise RuntimeError(
            f"hook {name} on {where} returned an array of shape {result.shape} and dtype "
            f"{result.dtype}, but the gradient it replaces has shape {grad.shape} "
            f"({grad.dtype}). A hook must return a gradient of the same shape, or None to "
            "keep the gradient as it is."
        )
    return result.astype(grad.dtype, copy=False)


def check_arity(node: Function, grad_inputs: Any) -> tuple:
    """`backward`'s result as a tuple of one gradient per input, or an error naming the op."""
    if grad_inputs.__class__ is not tuple:
        grad_inputs = (grad_inputs,)
    if len(grad_inputs) == len(node.parents):
        return grad_inputs
    raise RuntimeError(
        f"{node.name}.backward returned {len(grad_inputs)} gradient(s) for "
        f"{len(node.parents)} input(s); return one entry per forward input, in order, with None "
        "where no gradient flows."
    )


def fit(grad: Any, parent: Any, node: Function) -> np.ndarray | None:
    """`grad` as an ndarray of the input's shape (summing out broadcast axes) and dtype."""
    if grad is None:  # no gradient flows to this input
        return None
    shape, dtype = parent.grad_like
    if grad.__class__ is not np.ndarray:
        grad = np.asarray(grad)
        if grad.dtype.kind not in "fiub":
            raise TypeError(
                f"{node.name}.backward returned {grad.dtype} data for input "
                f"{_position(node, parent)}; a gradient must be a float array (or a number)."
            )
    if grad.shape != shape:
        grad = sum_to_shape(grad, shape, node, parent)
    if grad.dtype != dtype:
        grad = grad.astype(dtype) if dtype.kind == "f" else _integer_input(parent, node)
    return grad


def _integer_input(parent: Any, node: Function) -> NoReturn:
    """`t.requires_grad = True` set on an integer tensor (nothing checks it): refused."""
    raise TypeError(
        f"backward(): input {_position(node, parent)} of {node.name} requires grad but has dtype "
        f"{parent.grad_like[1]}: its gradient would be rounded. Make it a float tensor first."
    )


def _position(node: Any, parent: Any) -> int:
    return next((i for i, p in enumerate(node.parents) if p is parent), 0)


def sum_to_shape(grad: np.ndarray, shape: tuple, node: Any, parent: Any) -> np.ndarray:
    """Undo broadcasting: sum `grad` over the axes that broadcasting added or stretched."""
    lead = grad.ndim - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, grad.shape[lead:])):
        raise RuntimeError(
            f"{node.name}.backward returned a gradient of shape {grad.shape} for input "
            f"{_position(node, parent)}, whose shape is {shape}; the shapes do not broadcast. A "
            "backward must return, per input, an array of that input's shape or of the "
            "broadcast output shape."
        )
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1)
    return np.asarray(grad.sum(axis=tuple(range(lead)) + stretched)).reshape(shape)


def add_to_grad(tensor: Any, grad: np.ndarray) -> None:
    """`tensor.grad += grad` (a Tensor), where the first gradient is copied: it may be an op's
    or the caller's array, and later accumulation must not write into it."""
    if tensor._grad is None:
        tensor._grad = _tensor.Tensor._make(grad.copy())
    else:
        tensor._grad._data += grad


def _made_by(root: Any) -> str:
    return f" (made by {root.grad_fn.name})" if root.grad_fn is not None else ""


def root_gradient(root: Any, gradient: Any) -> np.ndarray:
    """The gradient backward starts from: ones for a one-element root, else `gradient`."""
    if gradient is None and root.requires_grad and root._data.size == 1:  # loss.backward()
        return np.ones(root._data.shape, dtype=root._data.dtype)
    if not root.requires_grad:
        raise RuntimeError(
            f"backward(): this tensor (shape {root.shape}) does not require grad and has no "
            "grad_fn, so there is nothing to differentiate. Create the leaves you want "
            "gradients for with requires_grad=True, and do not compute it under no_grad()."
        )
    if gradient is None:
        if root._data.size != 1:
            raise RuntimeError(
                f"backward(): the gradient can be implied only for a one-element output, but this "
                f"output{_made_by(root)} has shape {root.shape}. Reduce it first (e.g. "
                f"out.sum().backward()) or pass gradient=<array of shape {root.shape}>."
            )
        return np.ones(root.shape, dtype=root.dtype)
    raw = gradient._data if isinstance(gradient, _tensor.Tensor) else gradient
    try:
        array = np.asarray(raw)
    except ValueError:  # a ragged list: reported as data that is not numbers, below
        array = np.empty(0, dtype=object)
    if array.dtype.kind not in "fiub":
        raise TypeError(
            f"backward(gradient=...): got {type(raw).__name__} data of dtype {array.dtype}; pass "
            f"numbers: an array of shape {root.shape}."
        )
    if array.shape != root.shape:
        raise RuntimeError(
            f"backward(gradient=...): the gradient has shape {array.shape} but the output "
            f"has shape {root.shape}; they must be equal. Pass the gradient of what you are "
            f"differentiating with respect to this output{_made_by(root)}: one number per "
            "output element."
        )
    return array.astype(root.dtype, copy=False)


def graph_order(root_nodes: list) -> list:
    """Every node reachable from `root_nodes`, each after the nodes that made its inputs (in
    the order they were made). The graph renderer numbers its nodes in this order."""
    seen, stack = set(root_nodes), list(root_nodes)
    while stack:
        for parent in stack.pop().parents:
            if isinstance(parent, Function) and parent not in seen:
                seen.add(parent)
                stack.append(parent)
    return sorted(seen, key=lambda node: node.sequence)


def topological_order(root_node: Any) -> list:
    """The nodes reachable from `root_node`, each before the nodes that made its inputs."""
    return graph_order([root_node])[::-1]
