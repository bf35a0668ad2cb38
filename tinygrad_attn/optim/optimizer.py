"""`Optimizer`, the base of every optimizer: parameter groups, per-parameter state, `step`,
`zero_grad`, `state_dict` / `load_state_dict`, with PyTorch's meanings.

As in `torch.optim.Optimizer`: parameters come in `param_groups` (a list of dicts, each with
its own `lr`, `weight_decay`, ...; a group keeps the dict it was given, options it lacks set
from `defaults`); per-parameter buffers live in `state`, a `defaultdict(dict)` keyed by the
parameter; `state_dict()` gives `{"state": {index: {...}}, "param_groups": [{..., "params":
[index, ...]}]}` holding the live buffers (Tensors: `step` a 0-d float32 Tensor, `exp_avg`, ...),
as PyTorch's does, so `copy.deepcopy` it to keep a snapshot; `load_state_dict` copies a saved
state in (ours, PyTorch's read by `ta.load`, or the older form with arrays and int steps).

A step of the built-in optimizers runs on flat buffers (flat.py): a group's parameters that have
a gradient are laid end to end, so the formula is a handful of NumPy calls over all of them at
once. A subclass written as PyTorch users write one (its own `step()` looping over
`param_groups` and `state`) works too: the flat machinery is only used by `Optimizer.step`.

This module must not hold an optimizer's formula (sgd.py, adam.py, ...), nor build graph nodes.
"""

from __future__ import annotations

import copy
from collections import defaultdict
from collections.abc import Callable, Iterable
from itertools import chain
from typing import Any

import numpy as np

from ..creation import from_numpy
from ..state import enable_grad, no_grad
from ..tensor import Tensor
from .flat import FlatGroup

__all__ = ["Optimizer", "required"]


class _Required:
    """The default of an option every parameter group must set itself."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def _typename(value: Any) -> str:
    if isinstance(value, Tensor):
        return "a non-leaf Tensor" if not value.is_leaf else f"a Tensor of dtype {value.dtype}"
    return type(value).__name__


class Optimizer:
    """Base class of the optimizers, as `torch.optim.Optimizer(params, defaults)`.

    `params`: an iterable of Tensors (a generator such as `model.parameters()` is fine), of
    `(name, Tensor)` pairs (`model.named_parameters()`; the names are kept as the group's
    `param_names`), or of dicts `{"params": [...], option: value, ...}`, one per group.
    A parameter that does not require grad (frozen) is allowed: having no gradient, `step()`
    skips it. Built-in subclasses define `_state_names(group)` and `_update(flat, group)`.
    """

    _counts_steps = True  # keeps state["step"] (SGD does not)

    def __init__(self, params: Iterable[Any], defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        self._flats: dict[tuple, FlatGroup] = {}  # (group index, dtype) -> its flat layout
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params must be an iterable of Tensors or dicts, got a single Tensor; "
                "pass [tensor] or model.parameters()"
            )
        try:
            groups = list(params)
        except TypeError:
            raise TypeError(
                f"{name}: params must be an iterable of Tensors (e.g. model.parameters()) or of "
                f"dicts, got {type(params).__name__}"
            ) from None
        if not groups:
            raise ValueError(f"{name}: optimizer got an empty parameter list; nothing to optimize")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # ------------------------------------------------------------------- groups
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group `{"params": [...], option: value, ...}` (the dict itself is kept, its
        missing options set from `defaults`), e.g. to unfreeze layers while training. Each
        parameter may belong to one group only."""
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise TypeError(
                f"{name}.add_param_group: param_group must be a dict, got "
                f"{type(param_group).__name__}"
            )
        if "params" not in param_group:
            raise KeyError(f"{name}.add_param_group: the group has no 'params' entry")
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, (set, frozenset)):
            raise TypeError(
                f"{name}: parameters must come in an ordered collection (a list), not a set: "
                "a set's order changes from run to run, and so would the optimizer's state"
            )
        else:
            params = list(params)
        tensors = [p[1] if isinstance(p, tuple) else p for p in params]
        names = [p[0] for p in params if isinstance(p, tuple)]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError(
                    f"{name}: either every parameter comes with a name ((name, tensor) pairs, "
                    "as from named_parameters()) or none does; some names are missing"
                )
            param_group["param_names"] = names
        group_index = len(self.param_groups)
        for position, p in enumerate(tensors):
            where = f"parameter {position} of group {group_index}"
            if not isinstance(p, Tensor):
                raise TypeError(f"{name}: can only optimize Tensors, but {where} is {_typename(p)}")
            if not (p.is_leaf or p.retains_grad):
                raise ValueError(
                    f"{name}: can't optimize a non-leaf Tensor ({where}, made by "
                    f"{p.grad_fn.name}); optimize the leaf it was computed from, or "
                    ".detach().requires_grad_() it to make a new leaf"
                )
        for option, default in self.defaults.items():
            if default is required and option not in param_group:
                raise ValueError(
                    f"{name}: parameter group {group_index} does not set the required option "
                    f"{option!r}, and there is no default for it"
                )
            param_group.setdefault(option, default)
        seen: dict[int, int] = {}
        for position, p in enumerate(tensors):
            if id(p) in seen:
                # PyTorch only warns here, then updates such a parameter twice per step
                raise ValueError(
                    f"{name}: parameter {position} of group {group_index} "
                    f"({p.name or 'unnamed'}) is the same tensor as parameter {seen[id(p)]} of "
                    "that group; pass each parameter once"
                )
            seen[id(p)] = position
        for g, group in enumerate(self.param_groups):
            if ("param_names" in param_group) != ("param_names" in group):
                raise ValueError(
                    f"{name}: all parameter groups must be with names or all without; group "
                    f"{g} is {'with' if 'param_names' in group else 'without'} names"
                )
            if any(id(p) in seen for p in group["params"]):
                raise ValueError(
                    f"{name}: some parameters appear in more than one parameter group "
                    f"(groups {g} and {group_index}); put each parameter in one group"
                )
        self._check_group(param_group)
        self.param_groups.append(param_group)

    def _check_group(self, group: dict[str, Any]) -> None:
        """Refuse options this optimizer cannot honour (subclasses)."""

    # --------------------------------------------------------------------- step
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None (the default, as PyTorch's), or, with
        `set_to_none=False`, to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    grad = p._grad
                    if grad.grad_fn is not None:
                        grad = p._grad = grad.detach()
                    grad.requires_grad = False
                    with no_grad():
                        grad.zero_()

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient (those with `grad is None` are
        skipped). `closure`, if given, is called first with grad enabled (it should zero the
        gradients, compute the loss and call backward) and its return value is returned."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for index, group in enumerate(self.param_groups):
            by_dtype: dict[np.dtype, list] = {}
            for p in group["params"]:
                if p._grad is not None:
                    by_dtype.setdefault(p._data.dtype, []).append(p)
            names = self._state_names(group)
            if len(by_dtype) > 1 and (names or self._counts_steps):
                for p in group["params"]:  # (state made in the group's order, as PyTorch's)
                    if p._grad is not None:
                        self.state[p]
            for dtype, params in by_dtype.items():
                flat = self._flats.get((index, dtype))
                if flat is None or not flat.holds(params, names, self.state):
                    new = FlatGroup(params, self.state, names, self._counts_steps)
                    if flat is not None:
                        flat.release()
                    flat = self._flats[(index, dtype)] = new
                flat.gather_grads()
                self._update(flat, group)
        return loss

    def _state_names(self, group: dict[str, Any]) -> tuple:
        """Names of the per-parameter buffers in `state` (views of the flat buffers)."""
        return ()

    def _update(self, flat: FlatGroup, group: dict[str, Any]) -> None:
        raise NotImplementedError(
            f"{type(self).__name__}.step: a subclass of Optimizer defines step() (or, inside "
            "this package, _update())"
        )

    # -------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict[str, Any]:
        """PyTorch's layout: `{"state": {index: {name: Tensor, ...}}, "param_groups": [{option:
        value, ..., "params": [index, ...]}]}`, indices counting parameters across groups in
        order. The state entries are the live ones (a later step changes them, as in PyTorch):
        `copy.deepcopy(opt.state_dict())` keeps a snapshot; `ta.save` writes one."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {
            (index[id(p)] if isinstance(p, Tensor) else p): entry for p, entry in self.state.items()
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Copy a saved state in: what `state_dict()` gave (here or in PyTorch, read back by
        `ta.load`), or the older form of this package (arrays, int steps). Groups and
        parameters are matched by position; the groups' options come from the checkpoint.
        Everything is checked before anything changes."""
        name = type(self).__name__
        if not isinstance(state_dict, dict):
            raise TypeError(
                f"{name}.load_state_dict: expected a dict (what optimizer.state_dict() returns), "
                f"got {type(state_dict).__name__}"
            )
        if not {"state", "param_groups"} <= set(state_dict):
            raise KeyError(
                f"{name}.load_state_dict: expected a dict with keys 'state' and 'param_groups' "
                "(what optimizer.state_dict() returns)"
            )
        saved_groups = copy.deepcopy(list(state_dict["param_groups"]))
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: loaded state dict has a different number of parameter "
                f"groups ({len(saved_groups)}) than this optimizer ({len(self.param_groups)})"
            )
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: loaded state dict contains a parameter group that "
                    f"doesn't match the size of optimizer's group: group {g} has "
                    f"{len(saved['params'])} parameters there and {len(group['params'])} here"
                )
        by_index = dict(
            zip(
                chain.from_iterable(g["params"] for g in saved_groups),
                chain.from_iterable(g["params"] for g in self.param_groups),
            )
        )
        state: defaultdict[Any, dict] = defaultdict(dict)
        for key, entry in state_dict["state"].items():
            if key not in by_index:
                state[key] = entry  # (kept as it is, as PyTorch does)
                continue
            p = by_index[key]
            state[p] = {k: _loaded_value(name, key, k, v, p) for k, v in entry.items()}
        new_groups = []
        for saved, group in zip(saved_groups, self.param_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
            for option, default in self.defaults.items():  # (checkpoints from older versions)
                saved.setdefault(option, default)
            self._check_group(saved)
            new_groups.append(saved)
        for flat in self._flats.values():
            flat.release()
        self._flats.clear()
        self.param_groups[:] = new_groups
        self.state = state

    def __getstate__(self) -> dict[str, Any]:
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._flats = {}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for g, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {g}")
            lines += [f"    {k}: {group[k]}" for k in sorted(group) if k != "params"]
        return "\n".join(lines) + "\n)"


def _loaded_value(owner: str, index: Any, key: str, value: Any, p: Tensor) -> Any:
    """One saved state value as this optimizer keeps it: a Tensor of its own (a copy), in the
    parameter's dtype, except `step`, kept as PyTorch keeps it (a 0-d float32 Tensor)."""
    if key == "step":
        if isinstance(value, Tensor):
            return from_numpy(np.array(value.numpy(), copy=True))
        if isinstance(value, (int, float, np.integer, np.floating)):  # (the older form)
            return from_numpy(np.array(float(value), dtype=np.float32))
        return value
    if isinstance(value, (Tensor, np.ndarray)):
        array = value.numpy() if isinstance(value, Tensor) else value
        if array.shape != p.shape:
            raise ValueError(
                f"{owner}.load_state_dict: state[{index}][{key!r}] has shape {array.shape}, but "
                f"parameter {index} ({p.name or 'unnamed'}) has shape {p.shape}; the checkpoint "
                "belongs to another model"
            )
        dtype = p.dtype if p.dtype.kind == "f" else array.dtype
        return from_numpy(np.array(array, dtype=dtype, copy=True))
    if isinstance(value, dict):
        return {k: _loaded_value(owner, index, k, v, p) for k, v in value.items()}
    return copy.deepcopy(value)
