"""Optimizers (SGD, Adam, AdamW) and learning-rate schedulers, with PyTorch's formulas.

An optimizer reads each parameter's `.grad` and changes its `.data`; it never builds graph
nodes and never computes gradients. As in PyTorch, parameters come in `param_groups` (a list of
dicts, each with its own `lr`, `weight_decay`, ...), per-parameter buffers live in `state`
(keyed by the parameter), and `state_dict()` / `load_state_dict()` checkpoint both.

A step is a handful of NumPy calls over ALL the parameters at once, not a dozen per parameter:
the parameters of a group that have a gradient are laid end to end in one flat array (`_Flat`),
their gradients gathered with one `np.concatenate(out=)`, the update computed with in-place
ufuncs on the flat arrays (the same elementwise formula, so the same bits as per parameter),
and each parameter's slice copied back into its own memory, an in-place write like PyTorch's:
its version goes up, so a backward through a graph made before the step, which saved the old
values, is refused (versions.py). The per-parameter buffers in `state` (`exp_avg`, ...) are
views into the flat buffers.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from numbers import Real
from typing import Any

import numpy as np

from . import versions
from .tensor import Tensor

__all__ = [
    "SGD",
    "Adam",
    "AdamW",
    "CosineAnnealingLR",
    "LRScheduler",
    "LambdaLR",
    "Optimizer",
    "StepLR",
    "lr_scheduler",
]


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        kind = "a non-leaf Tensor" if not value.is_leaf else "a Tensor"
        return f"{kind} of dtype {value.dtype}"
    return type(value).__name__


def _number(owner: str, what: str, value: Any, low: float = 0.0, below: float | None = None):
    """`value` as a float, or a clear TypeError (not a real number) / ValueError (NaN, out of
    range) naming the optimizer and the argument."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
        raise TypeError(
            f"{owner}: {what} must be a real number, got {type(value).__name__} {value!r}"
            + (" (convert it with float(...))" if isinstance(value, str) else "")
        )
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{owner}: {what} must not be NaN")
    if value < low or (below is not None and value >= below):
        allowed = f"in [{low}, {below})" if below is not None else f">= {low}"
        raise ValueError(f"{owner}: {what} must be {allowed}, got {value}")
    return value


def _betas(owner: str, betas: Any) -> tuple[float, float]:
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(
            f"{owner}: betas must be a pair (beta1, beta2), e.g. (0.9, 0.999), got {betas!r}"
        )
    return tuple(_number(owner, f"betas[{i}]", b, 0.0, 1.0) for i, b in enumerate(betas))


class Optimizer:
    """Base class: `param_groups`, `state`, `zero_grad`, `state_dict`, `load_state_dict`.

    `params` is an iterable of float leaf Tensors (a generator such as `model.parameters()`
    is fine) or a list of dicts `{"params": [...], "lr": ..., ...}` whose missing options take
    the defaults. A parameter that does not require grad (frozen) is allowed and, having no
    gradient, skipped by `step()`. Subclasses define `_check(group)` and `_update(flat, group)`.
    """

    def __init__(self, params: Iterable[Any], defaults: dict) -> None:
        self.defaults = dict(defaults)
        self.param_groups: list[dict] = []
        # Per-parameter buffers, keyed by the parameter tensor (as PyTorch's `optimizer.state`).
        self.state: dict[Tensor, dict] = {}
        self._flats: dict[tuple, _Flat] = {}  # (group, dtype) -> the flat layout last used
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise TypeError(
                f"{name}: params must be an iterable of Tensors, got a single Tensor; pass "
                "[tensor] or model.parameters()"
            )
        try:
            params = list(params)
        except TypeError:
            raise TypeError(
                f"{name}: params must be an iterable of Tensors (e.g. model.parameters()) or of "
                f"dicts, got {type(params).__name__}"
            ) from None
        if not params:
            raise ValueError(f"{name}: got an empty parameter list; nothing to optimize")
        groups = params if isinstance(params[0], dict) else [{"params": params}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        """Add a group `{"params": [...], option: value, ...}`; missing options take the
        optimizer's defaults. Each parameter may belong to one group only."""
        name = type(self).__name__
        if not isinstance(group, dict) or "params" not in group:
            raise TypeError(
                f"{name}: a parameter group must be a dict with a 'params' entry, got "
                f"{type(group).__name__}"
            )
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        seen = {}  # id -> (group, position) of every parameter already in a group
        for g, other in enumerate(self.param_groups):
            seen.update({id(p): (g, i) for i, p in enumerate(other["params"])})
        for position, p in enumerate(params):
            where = f"parameter {position} of group {len(self.param_groups)}"
            if not (isinstance(p, Tensor) and p.dtype.kind == "f" and p.is_leaf):
                raise TypeError(f"{name}: {where} must be a float leaf Tensor, got {_describe(p)}")
            if id(p) in seen:
                raise ValueError(
                    f"{name}: {where} ({p.name or 'unnamed'}) is the same tensor as parameter "
                    f"{seen[id(p)][1]} of group {seen[id(p)][0]}; pass each parameter once"
                )
            seen[id(p)] = (len(self.param_groups), position)
        unknown = set(group) - set(self.defaults) - {"params", "initial_lr"}
        if unknown:
            raise TypeError(
                f"{name}: unknown option(s) {sorted(unknown)} in a parameter group; "
                f"{name} takes {sorted(self.defaults)}"
            )
        full = {**self.defaults, **group, "params": params}
        self._check(full)
        self.param_groups.append(full)

    def _check(self, group: dict) -> None:
        """Validate (and normalise to floats) the options of one group."""
        group["lr"] = _number(type(self).__name__, "lr", group["lr"])

    # ---------------------------------------------------------------------------- step
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Set every parameter's `.grad` to None (PyTorch's default), or to zeros."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad._data[...] = 0

    def step(self) -> None:
        """Update every parameter that has a gradient (those with `grad is None` are skipped)."""
        for index, group in enumerate(self.param_groups):
            by_dtype: dict = {}
            for p in group["params"]:
                if p.grad is not None:
                    by_dtype.setdefault(p._data.dtype, []).append(p)
            names = self._buffer_names(group)
            for dtype, params in by_dtype.items():
                key = (names, *((id(p), p._data.shape) for p in params))
                flat = self._flats.get((index, dtype))
                if flat is None or flat.key != key:
                    flat = self._flats[(index, dtype)] = _Flat(params, key, self.state, names)
                flat.gather()
                self._update(flat, group)
                flat.write_back()

    def _buffer_names(self, group: dict) -> tuple:
        """Names of the per-parameter arrays in `state` (views into the `_Flat` buffers)."""
        return ()

    def _update(self, flat: _Flat, group: dict) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define _update()")

    # ------------------------------------------------------------------- checkpointing
    def state_dict(self) -> dict:
        """PyTorch's layout: `{"state": {index: {...}}, "param_groups": [{..., "params":
        [index, ...]}]}`, indices counting parameters across groups in order. Arrays are
        copies, so the result can be pickled and later loaded to resume bit for bit."""
        index = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index[id(p)] = len(index)
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {}
        for group in self.param_groups:
            for p in group["params"]:
                if p in self.state:
                    buffers = self.state[p]
                    state[index[id(p)]] = {
                        key: value.copy() if isinstance(value, np.ndarray) else value
                        for key, value in buffers.items()
                    }
        return {"state": state, "param_groups": copy.deepcopy(groups)}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore what `state_dict()` returned. Everything is checked first (group count and
        sizes, buffer shapes); on any error nothing changes."""
        name = type(self).__name__
        if not isinstance(state_dict, dict) or set(state_dict) != {"state", "param_groups"}:
            raise ValueError(
                f"{name}.load_state_dict: expected a dict with keys 'state' and 'param_groups' "
                "(what state_dict() returns)"
            )
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"{name}.load_state_dict: the checkpoint has {len(saved_groups)} parameter "
                f"groups, this optimizer has {len(self.param_groups)}"
            )
        params = []
        for g, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"{name}.load_state_dict: group {g} has {len(saved['params'])} parameters in "
                    f"the checkpoint and {len(group['params'])} here"
                )
            params.extend(zip(saved["params"], group["params"]))
        by_index = dict(params)
        new_state = {}
        for key, buffers in state_dict["state"].items():
            if key not in by_index:
                raise ValueError(f"{name}.load_state_dict: state for unknown parameter {key}")
            p = by_index[key]
            restored = {}
            for buffer, value in buffers.items():
                if isinstance(value, Tensor):  # (a state dict read back by ta.load)
                    value = value.numpy()
                if isinstance(value, np.ndarray):
                    if value.shape != p.shape:
                        raise ValueError(
                            f"{name}.load_state_dict: state[{key}][{buffer!r}] has shape "
                            f"{value.shape}, but parameter {key} ({p.name or 'unnamed'}) has "
                            f"shape {p.shape}"
                        )
                    value = value.astype(p.dtype, copy=True)
                restored[buffer] = value
            new_state[p] = restored
        new_groups = []
        for saved, group in zip(saved_groups, self.param_groups):
            options = copy.deepcopy({k: v for k, v in saved.items() if k != "params"})
            new_group = {**group, **options, "params": group["params"]}
            self._check(new_group)
            new_groups.append(new_group)
        self.param_groups[:] = new_groups
        self.state = new_state
        self._flats.clear()  # the loaded buffers are not views into the old flat arrays

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for g, group in enumerate(self.param_groups):
            options = ", ".join(f"{k}={v}" for k, v in group.items() if k != "params")
            lines.append(f"  group {g}: {len(group['params'])} parameters, {options}")
        return "\n".join(lines + [")"])


class SGD(Optimizer):
    """Stochastic gradient descent, as `torch.optim.SGD`:

    g = grad + weight_decay * p
    buf = g                                          (first step)
    buf = momentum * buf + (1 - dampening) * g       (later steps; only when momentum != 0)
    g = g + momentum * buf if nesterov else buf
    p = p - lr * g
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> None:
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
        )
        super().__init__(params, defaults)

    def _check(self, group: dict) -> None:
        super()._check(group)
        for what in ("momentum", "dampening", "weight_decay"):
            group[what] = _number("SGD", what, group[what])
        group["nesterov"] = bool(group["nesterov"])
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError("SGD: nesterov=True needs momentum > 0 and dampening = 0")

    def _buffer_names(self, group: dict) -> tuple:
        return ("momentum_buffer",) if group["momentum"] else ()

    def _update(self, flat: _Flat, group: dict) -> None:
        lr, momentum, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
        g = flat.grad
        if weight_decay:
            np.multiply(flat.data, weight_decay, out=flat.work)
            flat.work += flat.grad
            g = flat.work  # g = grad + wd * p
        if momentum:
            buf = flat.buffers["momentum_buffer"]
            buf *= momentum
            if group["dampening"]:
                buf += np.multiply(g, 1 - group["dampening"], out=flat.work2)
            else:
                buf += g
            for a, b in flat.take_fresh():  # a parameter's first step: buf = g
                buf[a:b] = g[a:b]
            if group["nesterov"]:
                g = np.add(g, np.multiply(buf, momentum, out=flat.work2), out=flat.work2)
            else:
                g = buf
        np.multiply(g, lr, out=flat.work)
        flat.data -= flat.work


class Adam(Optimizer):
    """Adam, as `torch.optim.Adam` (amsgrad=False), per parameter with its own step count t:

    g = grad + weight_decay * p                      (L2 penalty; see AdamW for decoupled)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g^2
    p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    """

    _decoupled = False  # AdamW: decay the weights directly instead of adding to the gradient

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def _check(self, group: dict) -> None:
        name = type(self).__name__
        super()._check(group)
        group["betas"] = _betas(name, group["betas"])
        group["eps"] = _number(name, "eps", group["eps"])
        group["weight_decay"] = _number(name, "weight_decay", group["weight_decay"])

    def _buffer_names(self, group: dict) -> tuple:
        return ("exp_avg", "exp_avg_sq")

    def _update(self, flat: _Flat, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay = group["weight_decay"]
        m, v, p, out = flat.buffers["exp_avg"], flat.buffers["exp_avg_sq"], flat.data, flat.work
        steps = flat.count_step()  # each parameter's own step t (its bias correction)
        if steps.min() == steps.max():
            t = int(steps[0])
            step_size, root = lr / (1 - beta1**t), math.sqrt(1 - beta2**t)
        else:  # parameters that started at different steps: one factor per element
            step_size = flat.per_element(lr / (1 - beta1**steps))
            root = flat.per_element(np.sqrt(1 - beta2**steps))
        if weight_decay and self._decoupled:
            p *= 1 - lr * weight_decay  # p = p * (1 - lr * wd)
        g = flat.grad
        if weight_decay and not self._decoupled:
            g = np.add(np.multiply(p, weight_decay, out=flat.work2), g, out=flat.work2)  # g+wd*p
        m *= beta1
        np.multiply(g, 1 - beta1, out=out)
        m += out  # m = b1 m + (1 - b1) g
        v *= beta2
        np.multiply(g, g, out=out)
        out *= 1 - beta2
        v += out  # v = b2 v + (1 - b2) g^2
        np.sqrt(v, out=out)
        out /= root
        out += eps  # denominator
        np.divide(m, out, out=out)
        out *= step_size
        p -= out


class AdamW(Adam):
    """AdamW, as `torch.optim.AdamW`: Adam with decoupled weight decay,

    p = p * (1 - lr * weight_decay), then the Adam update with the plain gradient.
    The default weight_decay is 0.01, as in PyTorch.
    """

    _decoupled = True

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
    ) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


class _Flat:
    """The parameters of one group (and one dtype) that have a gradient, laid end to end.

    `data` and `grad` are flat copies gathered at each step; `buffers` (e.g. `exp_avg`) are the
    optimizer's flat state, and each parameter's `state[p][name]` is a view of its slice. A new
    layout (a parameter gained or lost its gradient, a shape changed, a checkpoint was loaded)
    copies the existing buffers in, so the state carries over exactly.
    """

    def __init__(self, params: list, key: tuple, state: dict, names: tuple) -> None:
        self.params, self.key, self.state = params, key, state
        sizes = [p._data.size for p in params]
        ends = np.cumsum(sizes, dtype=np.int64)
        self.bounds = [(int(e - n), int(e)) for e, n in zip(ends, sizes)]
        self.sizes = np.asarray(sizes, dtype=np.int64)
        total, dtype = int(ends[-1]), params[0]._data.dtype
        self.data, self.grad, self.work = (np.empty(total, dtype) for _ in range(3))
        self._work2 = None
        self.fresh = []  # bounds of parameters that had no buffers yet
        self.buffers = {}
        for name in names:
            flat = np.zeros(total, dtype)
            for p, (a, b) in zip(params, self.bounds):
                old = self.state.get(p, {}).get(name)
                if old is not None:
                    flat[a:b] = old.reshape(-1)
                elif name == names[0]:
                    self.fresh.append((a, b))
            self.buffers[name] = flat
        for p, (a, b) in zip(params, self.bounds):
            entry = self.state.setdefault(p, {})
            for name, flat in self.buffers.items():
                entry[name] = flat[a:b].reshape(p.shape)
        self.views = [self.data[a:b].reshape(p.shape) for p, (a, b) in zip(params, self.bounds)]

    @property
    def work2(self) -> np.ndarray:
        if self._work2 is None:
            self._work2 = np.empty_like(self.work)
        return self._work2

    def gather(self) -> None:
        np.concatenate([p._grad._data.reshape(-1) for p in self.params], out=self.grad)
        np.concatenate([p._data.reshape(-1) for p in self.params], out=self.data)

    def write_back(self) -> None:
        """Each parameter's new values into its memory, an in-place write (versions.py)."""
        for p, new in zip(self.params, self.views):
            np.copyto(p._data, new)
            versions.bump(p._data)

    def take_fresh(self) -> list:
        fresh, self.fresh = self.fresh, []
        return fresh

    def count_step(self) -> np.ndarray:
        """Add one to every parameter's `state[p]["step"]`; returns the new counts."""
        counts = []
        for p in self.params:
            entry = self.state[p]
            entry["step"] = entry.get("step", 0) + 1
            counts.append(entry["step"])
        return np.asarray(counts, dtype=np.float64)

    def per_element(self, per_param: np.ndarray) -> np.ndarray:
        return np.repeat(per_param.astype(self.data.dtype), self.sizes)


# ----------------------------------------------------------------------- lr schedulers
class LRScheduler:
    """Base class: sets each group's `lr` from its `initial_lr` and the epoch count.

    Call `scheduler.step()` once per epoch (after `optimizer.step()`), as in PyTorch; the
    lr is computed in closed form from `last_epoch`, so `get_last_lr()` is exact.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(self).__name__}: expected an Optimizer, got {type(optimizer).__name__}"
            )
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, base_lr: float, epoch: int) -> float:
        raise NotImplementedError(f"{type(self).__name__} must define lr_at()")

    def step(self) -> None:
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.lr_at(base, self.last_epoch)

    def get_last_lr(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: v for k, v in vars(self).items() if k not in ("optimizer", "lr_lambda")}

    def load_state_dict(self, state: dict) -> None:
        vars(self).update(state)


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (epoch // step_size)."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        if isinstance(step_size, bool) or not isinstance(step_size, (int, np.integer)):
            raise TypeError(f"StepLR: step_size must be an int, got {type(step_size).__name__}")
        if step_size <= 0:
            raise ValueError(f"StepLR: step_size must be positive, got {step_size}")
        self.step_size = int(step_size)
        self.gamma = _number("StepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.gamma ** (epoch // self.step_size)


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
    (PyTorch's closed form)."""

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = _number("CosineAnnealingLR", "T_max", T_max)
        if self.T_max == 0:
            raise ValueError("CosineAnnealingLR: T_max must be positive")
        self.eta_min = _number("CosineAnnealingLR", "eta_min", eta_min)
        super().__init__(optimizer, last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        cosine = (1 + math.cos(math.pi * epoch / self.T_max)) / 2
        return self.eta_min + (base_lr - self.eta_min) * cosine


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(epoch) (one function, or one per group)."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list,
        last_epoch: int = -1,
    ) -> None:
        groups = len(optimizer.param_groups) if isinstance(optimizer, Optimizer) else 1
        lambdas = list(lr_lambda) if isinstance(lr_lambda, (list, tuple)) else [lr_lambda] * groups
        if len(lambdas) != groups or not all(callable(f) for f in lambdas):
            raise TypeError(
                f"LambdaLR: lr_lambda must be a function or a list of {groups} functions "
                "(one per parameter group)"
            )
        self.lr_lambda = lambdas
        super().__init__(optimizer, last_epoch)

    def step(self) -> None:
        self.last_epoch += 1
        for group, base, fn in zip(self.optimizer.param_groups, self.base_lrs, self.lr_lambda):
            group["lr"] = base * fn(self.last_epoch)

    def lr_at(self, base_lr: float, epoch: int) -> float:
        return base_lr * self.lr_lambda[0](epoch)


class _SchedulerNamespace:
    """`optim.lr_scheduler.StepLR`, spelled as in PyTorch."""

    LRScheduler = LRScheduler
    StepLR = StepLR
    CosineAnnealingLR = CosineAnnealingLR
    LambdaLR = LambdaLR


lr_scheduler = _SchedulerNamespace
