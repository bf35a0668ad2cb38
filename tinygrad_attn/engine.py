"""The backward engine: one topological sort, one loop, one place where gradients add up.

`backward_steps(root)` is the whole algorithm, as a generator: sort the graph (iteratively, so a
20,000-op chain needs no recursion), then for each node in reverse topological order take the
gradient that arrived at its output (`grad_out`), call the op's `backward`, and hand each
returned gradient to `accumulate`, which sums it to the input's shape (un-broadcasting) and adds
it where it belongs. `Tensor.backward()` just exhausts this generator, so stepping through it in
a debugger, or with `for step in loss.backward_steps()`, runs exactly the same code.

This module must not know any op's calculus, nor build graph nodes (function.py does).
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from .tensor import Tensor


class BackwardStep:
    """What one node of the backward pass did (the records `backward_steps()` yields).

    `index`: position in the pass; `op`: the op's name; `node`: the `Function`; `output`: the
    tensor the node made; `grad_output`: the gradient that arrived at it; `inputs`: its input
    tensors; `grad_inputs`: one array (already summed to that input's shape) or None per input.
    """

    __slots__ = ("index", "op", "node", "output", "grad_output", "inputs", "grad_inputs")

    def __init__(self, index, node, output, grad_output, inputs, grad_inputs) -> None:
        self.index = index
        self.op = node.name
        self.node = node
        self.output = output
        self.grad_output = grad_output
        self.inputs = inputs
        self.grad_inputs = grad_inputs

    def __repr__(self) -> str:
        def label(t: Any) -> str:
            return f"{t.name or 'tensor'}{tuple(t.shape)}"

        def norm(g: np.ndarray | None) -> str:
            return "-" if g is None else f"{float(np.linalg.norm(g)):.3g}"

        ins = ", ".join(
            f"{label(t)} |grad|={norm(g)}" for t, g in zip(self.inputs, self.grad_inputs)
        )
        return (
            f"step {self.index}: {self.op} -> {label(self.output)} "
            f"|grad_out|={norm(self.grad_output)}  =>  {ins}"
        )

    __str__ = __repr__

    def explain(self) -> str:
        """Several lines: the op's formula, and the arrays that went in and came out."""
        from .debug import explain_step  # debug reads the graph; imported only when asked

        return explain_step(self)


def topological_order(root_node: Any) -> list:
    """The nodes reachable from `root_node`, each after every node that uses its output."""
    order: list = []
    visited: set = set()
    stack = [(root_node, False)]
    while stack:
        node, children_done = stack.pop()
        if children_done:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        stack.append((node, True))
        for tensor in node.inputs:
            parent = tensor.grad_fn
            if parent is not None and parent not in visited:
                stack.append((parent, False))
    order.reverse()
    return order


def sum_to_shape(grad: np.ndarray, shape: tuple, node: Any, position: int) -> np.ndarray:
    """Undo broadcasting: sum `grad` over the axes that broadcasting added or stretched."""
    if grad.shape == shape:
        return grad
    lead = grad.ndim - len(shape)
    stretched = tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and grad.shape[lead + i] != 1
    )
    if lead < 0 or any(
        n != 1 and grad.shape[lead + i] != n for i, n in enumerate(shape)
    ):
        raise RuntimeError(
            f"{node.name}.backward returned a gradient of shape {grad.shape} for input "
            f"{position}, whose shape is {shape}; the shapes do not broadcast. A backward must "
            "return, per input, an array of that input's shape or of the broadcast output shape."
        )
    return grad.sum(axis=tuple(range(lead)) + stretched).reshape(shape)


def add_to_grad(tensor: Tensor, grad: np.ndarray) -> None:
    """`tensor.grad += grad`, where the first gradient is copied: it may be an op's or the
    caller's array, and later accumulation must not write into it."""
    if tensor._grad is None:
        tensor._grad = grad.copy()
    else:
        tensor._grad += grad


def accumulate(tensor: Any, grad: Any, grads: dict, node: Any, position: int):
    """THE place gradients add up: reduce `grad` to `tensor`'s shape and dtype, then add it to
    `tensor.grad` (a leaf) or to `grads[producer]` (an intermediate, for its node's turn).
    Returns the reduced gradient (None where no gradient flows)."""
    if grad is None or not tensor.requires_grad:
        return None
    grad = sum_to_shape(np.asarray(grad), tuple(tensor.shape), node, position)
    if grad.dtype != tensor.dtype:
        grad = grad.astype(tensor.dtype)
    key = tensor.grad_fn
    if key is None and not tensor._hooks:
        add_to_grad(tensor, grad)
        return grad
    key = tensor if key is None else key  # leaves with hooks wait for their total
    previous = grads.get(key)
    grads[key] = grad if previous is None else previous + grad
    return grad


def _root_gradient(root: Tensor, gradient: Any) -> np.ndarray:
    if not root.requires_grad:
        raise RuntimeError(
            f"backward(): this tensor (shape {root.shape}) does not require grad and has no "
            "grad_fn, so there is nothing to differentiate. Create the leaves you want "
            "gradients for with requires_grad=True, and do not compute it under no_grad()."
        )
    if gradient is None:
        if root.data.size != 1:
            raise RuntimeError(
                f"backward(): the gradient can be implied only for a one-element output, but "
                f"this output has shape {root.shape}. Reduce it first (e.g. out.sum()."
                "backward()) or pass gradient=<array of shape "
                f"{root.shape}>."
            )
        return np.ones(root.shape, dtype=root.dtype)
    gradient = np.asarray(gradient.data if isinstance(gradient, Tensor) else gradient)
    if gradient.shape != root.shape:
        raise RuntimeError(
            f"backward(gradient=...): the gradient has shape {gradient.shape} but the output "
            f"has shape {root.shape}; they must be equal."
        )
    return gradient.astype(root.dtype, copy=False)


def backward_steps(
    root: Tensor, gradient: Any = None, retain_graph: bool = False
) -> Iterator[BackwardStep]:
    """Run the backward pass from `root`, yielding one `BackwardStep` per node."""
    grad_root = _root_gradient(root, gradient)
    grads: dict = {}
    if root.grad_fn is None:
        accumulate(root, grad_root, grads, root, 0)
    else:
        grads[root.grad_fn] = grad_root
        for index, node in enumerate(topological_order(root.grad_fn)):
            grad_out = grads.pop(node, None)
            if grad_out is None:
                continue  # every consumer of this node's output returned None for it
            if node.released:
                raise RuntimeError(
                    f"backward(): the graph was already released by an earlier backward() "
                    f"(reached {node.name}, output shape {node.output_shape}). Pass "
                    "retain_graph=True to the first backward() to run backward through the "
                    "same graph twice, or recompute the forward pass."
                )
            for hook in node.output_hooks:
                hooked = hook(grad_out)
                grad_out = grad_out if hooked is None else np.asarray(hooked)
            if node.retains_output_grad and node.output_ref() is not None:
                add_to_grad(node.output_ref(), grad_out)
            grad_inputs = node.backward(node, grad_out)
            if not isinstance(grad_inputs, tuple):
                grad_inputs = (grad_inputs,)
            if len(grad_inputs) != len(node.inputs):
                raise RuntimeError(
                    f"{node.name}.backward returned {len(grad_inputs)} gradient(s) for "
                    f"{len(node.inputs)} input(s); return one entry per forward input, in "
                    "order, with None where no gradient flows."
                )
            grad_inputs = tuple(
                accumulate(tensor, grad, grads, node, position)
                for position, (tensor, grad) in enumerate(zip(node.inputs, grad_inputs))
            )
            for callback in _observers.on_backward:
                callback(node, grad_out, grad_inputs)
            yield BackwardStep(index, node, node.output, grad_out, node.inputs, grad_inputs)
            if not retain_graph:
                node.release()
    for leaf, grad in grads.items():  # leaves with hooks: hooks see the total, as in PyTorch
        for hook in leaf._hooks:
            hooked = hook(grad)
            grad = grad if hooked is None else np.asarray(hooked, dtype=leaf.dtype)
        add_to_grad(leaf, grad)


from .function import observers as _observers  # noqa: E402  (function.py imports tensor.py)
