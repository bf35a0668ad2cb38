"""A Module's hooks, as PyTorch's: `register_forward_pre_hook`, `register_forward_hook`,
`register_full_backward_pre_hook`, `register_full_backward_hook`, each returning a handle whose
`remove()` takes the hook off (`hooks.RemovableHandle`, also a context manager).

Forward hooks run around `forward` (`Module.__call__` comes here only when a hook is
registered). Backward hooks need every gradient of a call at once, so a call with backward hooks
routes the tensors that require grad through one node on each side of `forward`:
`ModuleBackwardHook` concatenates them (the module's inputs; then its outputs) and the module
sees its pieces. In backward, that node receives the gradients of all the pieces summed into
one array, which it splits and hands to the hooks, and whatever they return is what flows on.
A hook receives and returns Tensors; the backward hooks fire only when the gradient reaches
this module (not under `no_grad`).

This module must not compute any gradient itself: the node's backward only splits and passes
on what arrives.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError
from ..function import Function
from ..hooks import RemovableHandle
from ..state import is_grad_enabled
from ..tensor import Tensor

_hook_ids = itertools.count()


class _Hooks:
    """The hooks registered on one module: for each kind, {id: (hook, options)} in call order."""

    def __init__(self) -> None:
        self.forward_pre: dict = {}
        self.forward: dict = {}
        self.backward_pre: dict = {}
        self.backward: dict = {}

    def empty(self) -> bool:
        return not (self.forward_pre or self.forward or self.backward_pre or self.backward)


class HooksMixin:
    """The hook registration and the hooked call of `Module`."""

    _hooks_of: _Hooks | None = None  # (None: no hook; `Module.__call__` takes the plain path)

    def _add_hook(self, kind: str, entry: tuple, prepend: bool) -> RemovableHandle:
        if not callable(entry[0]):
            raise TypeError(
                f"{self._label()}.register_{kind}_hook: the hook must be callable, got "
                f"{type(entry[0]).__name__}"
            )
        hooks = self.__dict__.get("_hooks_of")
        if hooks is None:
            hooks = _Hooks()
            object.__setattr__(self, "_hooks_of", hooks)
        key = next(_hook_ids)
        table = getattr(hooks, kind)
        if prepend:
            setattr(hooks, kind, {key: entry, **table})
        else:
            table[key] = entry

        def remove() -> None:
            getattr(hooks, kind).pop(key, None)
            if hooks.empty() and self.__dict__.get("_hooks_of") is hooks:
                object.__setattr__(self, "_hooks_of", None)

        return RemovableHandle(remove)

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """Call `hook(module, args)` before each `forward` (with `with_kwargs=True`:
        `hook(module, args, kwargs)`). A returned value replaces the arguments: a tuple (or a
        single value, made a 1-tuple); with kwargs, a pair `(args, kwargs)`."""
        return self._add_hook("forward_pre", (hook, bool(with_kwargs)), prepend)

    def register_forward_hook(
        self,
        hook: Callable,
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """Call `hook(module, args, output)` after each `forward` (with `with_kwargs=True`:
        `hook(module, args, kwargs, output)`); a returned value replaces the output. With
        `always_call=True` it runs (with output None) even when `forward` raises."""
        return self._add_hook("forward", (hook, bool(with_kwargs), bool(always_call)), prepend)

    def register_full_backward_pre_hook(
        self, hook: Callable, prepend: bool = False
    ) -> RemovableHandle:
        """Call `hook(module, grad_output)` when the gradients of this module's outputs are
        known (`grad_output`: a tuple of Tensors, None for an output that needs none); a
        returned tuple replaces them."""
        return self._add_hook("backward_pre", (hook,), prepend)

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """Call `hook(module, grad_input, grad_output)` when the gradients of this module's
        tensor arguments are known (tuples of Tensors, None where a tensor needs no gradient);
        a returned tuple, one entry per tensor argument, replaces `grad_input`."""
        return self._add_hook("backward", (hook,), prepend)

    # ------------------------------------------------------------------ the hooked call
    def _call_with_hooks(self, args: tuple, kwargs: dict) -> Any:
        hooks = self._hooks_of
        for hook, with_kwargs in list(hooks.forward_pre.values()):
            if with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            f"{self._label()}: a forward pre-hook registered with_kwargs=True "
                            f"must return None or (new_args, new_kwargs), got {result!r:.80}"
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        call = None
        if (hooks.backward or hooks.backward_pre) and is_grad_enabled():
            call = _BackwardHookCall(self, hooks)
            args = call.wrap_inputs(args)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for hook, with_kwargs, always in list(hooks.forward.values()):
                if always:
                    hook(self, args, kwargs, None) if with_kwargs else hook(self, args, None)
            raise
        for hook, with_kwargs, _ in list(hooks.forward.values()):
            result = hook(self, args, kwargs, output) if with_kwargs else hook(self, args, output)
            if result is not None:
                output = result
        return output if call is None else call.wrap_outputs(output)


class ModuleBackwardHook(Function):
    """out = concatenation of the flattened inputs (a module's tensor arguments, or its
    outputs);  d(input k) = its part of dout, as the module's backward hooks leave it"""

    @staticmethod
    def forward(ctx, *arrays, call, role):
        ctx.call, ctx.role = call, role
        ctx.shapes = [a.shape for a in arrays]
        return np.concatenate([a.reshape(-1) for a in arrays])  # (total size,)

    @staticmethod
    def backward(ctx, grad_out):
        ends = np.cumsum([int(np.prod(shape)) for shape in ctx.shapes])
        parts = np.split(grad_out, ends[:-1])
        grads = [part.reshape(shape) for part, shape in zip(parts, ctx.shapes)]
        return tuple(ctx.call.run_hooks(ctx.role, grads))


def _route(tensors: list[Tensor], call: _BackwardHookCall, role: str) -> list[Tensor]:
    """The tensors, each re-made as a piece of one ModuleBackwardHook node."""
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise DTypeError(
            f"{call.module._label()}: full backward hooks need the {role} that require grad to "
            f"share one dtype, got {sorted(map(str, dtypes))}; convert them first"
        )
    joined = ModuleBackwardHook.apply(*tensors, call=call, role=role)  # (total size,)
    pieces, start = [], 0
    for t in tensors:
        pieces.append(joined[start : start + t.numel()].reshape(t.shape))
        start += t.numel()
    return pieces


class _BackwardHookCall:
    """One call of a module that has backward hooks: its tensor arguments and outputs, and the
    gradients of its outputs once they are known."""

    def __init__(self, module: Any, hooks: _Hooks) -> None:
        self.module, self.hooks = module, hooks
        self.input_count = 0
        self.inputs_routed = False
        self.output_slots: list[int] = []  # which outputs are tensors
        self.grad_output: tuple | None = None

    def wrap_inputs(self, args: tuple) -> tuple:
        positions = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.input_count = len(positions)
        self.input_grad_slots = [i for i, p in enumerate(positions) if args[p].requires_grad]
        if not self.input_grad_slots:
            return args
        self.inputs_routed = True
        chosen = [positions[i] for i in self.input_grad_slots]
        args = list(args)
        for position, piece in zip(chosen, _route([args[p] for p in chosen], self, "inputs")):
            args[position] = piece
        return tuple(args)

    def wrap_outputs(self, output: Any) -> Any:
        single = isinstance(output, Tensor)
        items = [output] if single else list(output) if isinstance(output, (tuple, list)) else []
        self.output_slots = [i for i, item in enumerate(items) if isinstance(item, Tensor)]
        self.output_grad_slots = [
            k for k, i in enumerate(self.output_slots) if items[i].requires_grad
        ]
        if not self.output_grad_slots:
            return output
        chosen = [self.output_slots[k] for k in self.output_grad_slots]
        for position, piece in zip(chosen, _route([items[i] for i in chosen], self, "outputs")):
            items[position] = piece
        return items[0] if single else type(output)(items)

    def run_hooks(self, role: str, grads: list) -> list:
        """The gradients of the routed tensors, as the hooks leave them."""
        module = self.module
        if role == "outputs":
            count, slots = len(self.output_slots), self.output_grad_slots
        else:
            count, slots = self.input_count, self.input_grad_slots
        full = [None] * count
        for slot, grad in zip(slots, grads):
            full[slot] = Tensor._make(grad)
        full = tuple(full)
        if role == "outputs":
            for (hook,) in list(self.hooks.backward_pre.values()):
                full = _replaced(full, hook(module, full), module, "grad_output")
            self.grad_output = full
            if not self.inputs_routed and self.hooks.backward:
                warnings.warn(
                    f"{module._label()}: full backward hook fired with the gradients of the "
                    "module's outputs, since none of its inputs requires grad (grad_input is "
                    "all None)",
                    UserWarning,
                    stacklevel=2,
                )
                nothing = (None,) * self.input_count
                for (hook,) in list(self.hooks.backward.values()):
                    hook(module, nothing, full)
        else:
            for (hook,) in list(self.hooks.backward.values()):
                full = _replaced(full, hook(module, full, self.grad_output or ()), module, "")
        return [_array(full[slot], grad) for slot, grad in zip(slots, grads)]


def _replaced(current: tuple, result: Any, module: Any, what: str) -> tuple:
    """`current`, or what a backward hook returned instead (checked: one entry each)."""
    if result is None:
        return current
    name = what or "grad_input"
    if not isinstance(result, (tuple, list)) or len(result) != len(current):
        got = len(result) if isinstance(result, (tuple, list)) else type(result).__name__
        raise RuntimeError(
            f"{module._label()}: a backward hook returned an invalid number of {name}, got "
            f"{got}, but expected {len(current)} (a tuple with one entry per {name} entry)"
        )
    return tuple(result)


def _array(grad: Any, like: np.ndarray) -> np.ndarray:
    """A hook's gradient as an array of `like`'s shape and dtype (None: zeros)."""
    if grad is None:
        return np.zeros_like(like)
    array = np.asarray(grad._data if isinstance(grad, Tensor) else grad)
    if array.shape != like.shape:
        raise ShapeError(
            f"a backward hook returned a gradient of shape {array.shape}, expected {like.shape}"
        )
    return array.astype(like.dtype, copy=False)
