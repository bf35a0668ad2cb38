"""`torch.autograd.functional`: derivatives of a function of tensors, computed with the
engine's `autograd.grad`: `jacobian`, `hessian`, `vjp`, `jvp`, `hvp`, `vhp`, with PyTorch's
signatures and return shapes (a Tensor for a Tensor input, tuples for tuples).

Each works on fresh copies of the inputs that require grad (so the caller's tensors and their
`.grad` are untouched); with `create_graph=True` the results keep a graph back to the inputs.
A derivative that does not depend on an input is zeros, as PyTorch's; with `strict=True` it is
a RuntimeError naming the input instead.
`jvp` and `hvp` use the double-backward trick (a vjp of a vjp), so they need the function's ops
to be differentiable twice, which every built-in op is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]


def _grad(outputs: Any, inputs: tuple, grad_outputs: Any = None, **kwargs: Any) -> tuple:
    """`autograd.grad`, where an output that does not require grad (a derivative that is a
    constant) contributes nothing: all None when no output does."""
    from . import grad  # (the package imports this module first)

    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    weights = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    kept = [(o, w) for o, w in zip(outputs, weights) if o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    kwargs.setdefault("allow_unused", True)
    weights = None if grad_outputs is None else [w for _, w in kept]
    return grad([o for o, _ in kept], inputs, weights, **kwargs)


def _strict(found: tuple, fn: str, what: str, create_graph: bool = False) -> None:
    """strict=True: a derivative that does not depend on an input (None, or with create_graph
    one without a graph) is an error naming the input, as PyTorch's strict mode."""
    for i, g in enumerate(found):
        if g is None or (create_graph and not g.requires_grad):
            extra = " when create_graph=True" if g is not None else ""
            raise RuntimeError(
                f"{fn}: {what} is independent of input {i}. This is not allowed in strict "
                f"mode{extra}; pass strict=False to get zeros for it."
            )


def _as_tuple(value: Any, what: str, fn: str) -> tuple[bool, tuple]:
    if isinstance(value, Tensor):
        return False, (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return True, tuple(value)
    raise TypeError(f"{fn}: {what} must be a Tensor or a tuple of Tensors, got {value!r}")


def _prepared(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs to differentiate with respect to: a copy in the graph (create_graph), else a
    fresh leaf of the same values."""
    return tuple(
        t * 1 if create_graph and t.requires_grad else t.detach().requires_grad_(True)
        for t in inputs
    )


def _out(values: tuple, tupled: bool, create_graph: bool) -> Any:
    if not create_graph:
        values = tuple(v.detach() if isinstance(v, Tensor) else v for v in values)
    return values if tupled else values[0]


def _filled(grads: tuple, like: tuple) -> tuple:
    """None (an input that did not matter) as zeros, as PyTorch's functional API gives."""
    return tuple(g if g is not None else _zeros(t) for g, t in zip(grads, like))


def _zeros(like: Tensor) -> Tensor:
    return Tensor._make(np.zeros(like.shape, like.dtype))


def _check_v(v: Any, like: tuple, what: str, fn: str) -> tuple:
    tupled, vs = _as_tuple(v, what, fn)
    if len(vs) != len(like) or any(a.shape != b.shape for a, b in zip(vs, like)):
        raise ShapeError(
            f"{fn}: {what} must have the shapes of the {'outputs' if what == 'v' else what}: "
            f"got {[tuple(a.shape) for a in vs]}, expected {[tuple(b.shape) for b in like]}"
        )
    return vs


def vjp(func: Callable, inputs: Any, v: Any = None, create_graph=False, strict=False) -> tuple:
    """(func(inputs), vᵀ J): the vector-Jacobian product at `inputs`; `v` may be left out
    for a one-element output."""
    tupled, inputs = _as_tuple(inputs, "inputs", "vjp")
    inputs = _prepared(inputs, create_graph)
    out_tupled, outputs = _as_tuple(func(*inputs), "the output of func", "vjp")
    vs = _check_v(v, outputs, "v", "vjp") if v is not None else None
    if strict and not all(o.requires_grad for o in outputs):
        _strict((None,), "vjp", "the output of func")
    grads = _grad(outputs, inputs, vs, create_graph=True)
    if strict:
        _strict(grads, "vjp", "the output of func", create_graph)
    return (
        _out(outputs, out_tupled, create_graph),
        _out(_filled(grads, inputs), tupled, create_graph),
    )


def jvp(func: Callable, inputs: Any, v: Any = None, create_graph=False, strict=False) -> tuple:
    """(func(inputs), J v): the Jacobian-vector product at `inputs` (a vjp of a vjp: the vjp
    with a stand-in u is linear in u, and its vjp with v is J v)."""
    tupled, inputs = _as_tuple(inputs, "inputs", "jvp")
    inputs = _prepared(inputs, create_graph)
    vs = _check_v(v, inputs, "inputs", "jvp") if v is not None else None
    out_tupled, outputs = _as_tuple(func(*inputs), "the output of func", "jvp")
    if vs is None and any(t.numel() != 1 for t in inputs):
        raise RuntimeError("jvp: v can be left out only when every input has one element")
    vs = vs or tuple(Tensor._make(np.ones(t.shape, t.dtype)) for t in inputs)
    stand_ins = tuple(_zeros(o).requires_grad_(True) for o in outputs)
    if strict and not all(o.requires_grad for o in outputs):
        _strict((None,), "jvp", "the output of func")
    first = _grad(outputs, inputs, stand_ins, create_graph=True)
    if strict:
        _strict(first, "jvp", "the output of func")
    pairs = [(g, w) for g, w in zip(first, vs) if g is not None]
    if not pairs:
        found = tuple(Tensor._make(np.zeros(o.shape, o.dtype)) for o in outputs)
    else:
        found = _filled(
            _grad([g for g, _ in pairs], stand_ins, [w for _, w in pairs],
                  create_graph=create_graph),
            outputs,
        )  # fmt: skip
    return _out(outputs, out_tupled, create_graph), _out(found, out_tupled, create_graph)


def jacobian(
    func: Callable, inputs: Any, create_graph=False, strict=False, vectorize=False,
    strategy: str = "reverse-mode",
) -> Any:  # fmt: skip
    """The Jacobian of `func` at `inputs`: for one output and one input a Tensor of shape
    output.shape + input.shape; a tuple over inputs (and over outputs) when those are
    tuples."""
    tupled, inputs = _as_tuple(inputs, "inputs", "jacobian")
    inputs = _prepared(inputs, create_graph)
    out_tupled, outputs = _as_tuple(func(*inputs), "the output of func", "jacobian")
    rows = []
    for out in outputs:
        per_input: list[list] = [[] for _ in inputs]
        flat = out.reshape(-1)
        for j in range(flat.numel()):
            row = _grad(flat[j], inputs, retain_graph=True, create_graph=create_graph)
            if strict:
                _strict(row, "jacobian", f"output {len(rows)} of func", create_graph)
            for i, g in enumerate(_filled(row, inputs)):
                per_input[i].append(g.reshape(-1))
        rows.append(
            tuple(_stacked(parts, out.shape + t.shape, t) for parts, t in zip(per_input, inputs))
        )
    result = tuple(_out(r, True, create_graph) for r in rows)
    result = tuple(r if tupled else r[0] for r in result)
    return result if out_tupled else result[0]


def _stacked(parts: list, shape: tuple, like: Tensor) -> Tensor:
    from ..creation import stack

    if not parts:
        return Tensor._make(np.zeros(shape, like.dtype))
    return stack(parts).reshape(shape)


def hessian(
    func: Callable, inputs: Any, create_graph=False, strict=False, vectorize=False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:  # fmt: skip
    """The Hessian of a scalar `func` at `inputs`: the Jacobian of its gradient (shape
    input.shape + input.shape; a tuple of tuples over tuple inputs)."""
    tupled, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs: Tensor) -> tuple:
        out = func(*xs)
        if not isinstance(out, Tensor) or out.numel() != 1:
            raise RuntimeError("hessian: func must return a Tensor with a single element")
        first = _grad(out, xs, create_graph=True)
        if strict:
            _strict(first, "hessian", "the output of func")
            _strict(first, "hessian", "the gradient of func", create_graph=True)
        return _filled(first, xs)

    found = jacobian(gradient, inputs if tupled else inputs[0], create_graph=create_graph)
    if tupled:
        return found
    return found[0] if isinstance(found, tuple) else found


def vhp(func: Callable, inputs: Any, v: Any = None, create_graph=False, strict=False) -> tuple:
    """(func(inputs), vᵀ H): the vector-Hessian product of a scalar `func` at `inputs`."""
    tupled, inputs = _as_tuple(inputs, "inputs", "vhp")
    inputs = _prepared(inputs, create_graph)
    vs = _check_v(v, inputs, "inputs", "vhp") if v is not None else None
    out = func(*inputs)
    if not isinstance(out, Tensor) or out.numel() != 1:
        raise RuntimeError("vhp: func must return a Tensor with a single element")
    if vs is None and any(t.numel() != 1 for t in inputs):
        raise RuntimeError("vhp: v can be left out only when every input has one element")
    vs = vs or tuple(Tensor._make(np.ones(t.shape, t.dtype)) for t in inputs)
    first = _grad(out, inputs, create_graph=True)
    if strict:
        _strict(first, "vhp", "the output of func")
        _strict(first, "vhp", "the gradient of func", create_graph=True)
    pairs = [(g, w) for g, w in zip(first, vs) if g is not None]
    second = _grad([g for g, _ in pairs], inputs, [w for _, w in pairs],
                   create_graph=create_graph) if pairs else (None,) * len(inputs)  # fmt: skip
    if strict:
        _strict(second, "vhp", "the Hessian of func", create_graph)
    return _out((out,), False, create_graph), _out(_filled(second, inputs), tupled, create_graph)


def hvp(func: Callable, inputs: Any, v: Any = None, create_graph=False, strict=False) -> tuple:
    """(func(inputs), H v): the Hessian-vector product (H is symmetric: the same as vhp)."""
    return vhp(func, inputs, v, create_graph, strict)
