"""`LRScheduler`, the base of the learning-rate schedulers, with PyTorch's chainable meaning.

Each `step()` computes the next lr of every parameter group FROM THE GROUP'S CURRENT `lr`
(`group["lr"] * gamma`, ...), as PyTorch's schedulers do, so two schedulers on one optimizer
compose (their factors multiply) and a manual `group["lr"] = x` is respected by the next step.
Where PyTorch has a closed form (`_get_closed_form_lr`, used by the deprecated `step(epoch)`),
so do we. Construction records `initial_lr` in each group (`base_lrs`) and takes the first
step (epoch 0), as PyTorch does. `state_dict()` holds the scheduler's attributes under
PyTorch's names (everything but the optimizer), so a scheduler's checkpoint is interchangeable.

The order of calls PyTorch asks for is `optimizer.step()` then `scheduler.step()`; as PyTorch,
the scheduler wraps the optimizer's `step` to notice, and warns when the order is reversed.

This module must not hold any particular schedule (schedules.py, cyclic.py, combined.py,
plateau.py); it changes only `lr` (and the keys PyTorch's schedulers add) in param groups.
"""

from __future__ import annotations

import functools
import warnings
import weakref
from typing import Any

from ..tensor import Tensor
from .optimizer import Optimizer

__all__ = ["LRScheduler", "_LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` is deprecated (as in PyTorch): call "
    "`scheduler.step()` once per epoch. With an epoch given, the closed form is used where the "
    "scheduler has one, instead of the chainable form."
)


def format_param(name: str, optimizer: Optimizer, value: Any) -> list:
    """One value per parameter group: `value` repeated, or a list/tuple of one per group."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups: {name} has "
                f"{len(value)} values, param_groups has {len(optimizer.param_groups)}"
            )
    else:
        value = [value] * len(optimizer.param_groups)
    return [v.clone() if isinstance(v, Tensor) else v for v in value]


def group_values(optimizer: Optimizer, key: str) -> list:
    """`group[key]` of every group (a Tensor value cloned, so later fills do not change it)."""
    return [
        g[key].clone() if isinstance(g[key], Tensor) else g[key] for g in optimizer.param_groups
    ]


def set_group_value(group: dict, key: str, value: Any) -> None:
    """group[key] = value; a Tensor lr is filled in place (the optimizer holds that Tensor)."""
    if isinstance(group[key], Tensor):
        group[key].fill_(value.item() if isinstance(value, Tensor) else value)
    else:
        group[key] = value


def check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(
            f"{type(optimizer).__name__} is not an Optimizer: a scheduler takes the optimizer "
            "whose learning rate it changes, e.g. StepLR(optimizer, step_size=10)"
        )


def _watch_optimizer_steps(optimizer: Optimizer) -> None:
    """Wrap `optimizer.step` (on the instance, once) to set `optimizer._opt_called`, so the
    first `scheduler.step()` can warn when it comes before any `optimizer.step()`."""
    if getattr(optimizer.step, "_wrapped_by_lr_sched", False):
        return
    method = getattr(optimizer.step, "__func__", type(optimizer).step)
    owner = weakref.ref(optimizer)  # (no reference cycle through the instance attribute)

    @functools.wraps(method)
    def step(*args: Any, **kwargs: Any) -> Any:
        opt = owner()
        opt._opt_called = True
        return method(opt, *args, **kwargs)

    step._wrapped_by_lr_sched = True
    optimizer.step = step


class _Flag:
    """Sets `scheduler.<name>` to True for the duration of a `with` block."""

    def __init__(self, scheduler: Any, name: str) -> None:
        self.scheduler, self.name = scheduler, name

    def __enter__(self) -> None:
        setattr(self.scheduler, self.name, True)

    def __exit__(self, *exc: Any) -> None:
        setattr(self.scheduler, self.name, False)


class LRScheduler:
    """Base class, as `torch.optim.lr_scheduler.LRScheduler(optimizer, last_epoch=-1)`.

    A subclass defines `get_lr()` (the next lrs, one per group, usually from the groups'
    current lrs: the chainable form) and may define `_get_closed_form_lr()` (the lrs at
    `last_epoch` from `base_lrs`). `last_epoch=-1` starts a new schedule; another value resumes
    one and needs `initial_lr` in every group (load the optimizer's state first).
    """

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                        f"a scheduler with last_epoch={last_epoch}: load the optimizer's "
                        "state_dict (which has it) before making the scheduler, or start a new "
                        "schedule with last_epoch=-1"
                    )
        self.base_lrs: list = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _watch_optimizer_steps(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        """The step construction takes (to epoch 0, or one past the resumed epoch)."""
        self._step_count = 0
        with _Flag(self, "_is_initial"):
            self.step()

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's attributes but the optimizer, under PyTorch's names."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore what `state_dict()` returned."""
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list:
        """The lrs the last `step()` set, one per parameter group."""
        return self._last_lr

    def get_lr(self) -> list:
        """The next lrs (called by `step()`; read `get_last_lr()` for the current ones)."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(
                "get_lr() computes the next learning rates; to read the last ones the "
                "scheduler set, use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    def step(self, epoch: int | None = None) -> None:
        """Move the schedule one epoch on (call it after `optimizer.step()`) and set the
        groups' lrs. `epoch` (deprecated, as in PyTorch) jumps to that epoch instead."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "`optimizer.step()` was replaced after the learning rate scheduler was "
                    "made, so the scheduler cannot check the order of calls: make sure "
                    "`optimizer.step()` comes before `lr_scheduler.step()`.",
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. Call "
                    "them in the opposite order: `optimizer.step()` before "
                    "`lr_scheduler.step()`; otherwise the first value of the learning rate "
                    "schedule is skipped.",
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        with _Flag(self, "_get_lr_called_within_step"):
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form = getattr(self, "_get_closed_form_lr", None)
                values = closed_form() if closed_form is not None else self.get_lr()
        groups = self.optimizer.param_groups
        if len(values) != len(groups):
            raise ValueError(
                f"{type(self).__name__}.step: {len(values)} learning rates for "
                f"{len(groups)} parameter groups (a group added after the scheduler was made?)"
            )
        for group, lr in zip(groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr: list = group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The old name of `LRScheduler` (kept, as in PyTorch)."""
