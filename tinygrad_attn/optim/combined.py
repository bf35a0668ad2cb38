"""Schedulers made of schedulers, as `torch.optim.lr_scheduler`'s: `SequentialLR` (one after
another, switching at milestone epochs) and `ChainedScheduler` (all of them at every step,
their factors multiplying, since each starts from the lr the one before it set).

This module must not compute any lr itself: it only decides which scheduler steps when.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import Any

from .optimizer import Optimizer
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler, group_values, set_group_value

__all__ = ["ChainedScheduler", "SequentialLR"]


def _check_schedulers(owner: str, optimizer: Any, schedulers: Sequence) -> None:
    if len(schedulers) < 1:
        raise ValueError(f"{owner} expects at least one scheduler, but got no scheduler")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(
                f"{owner}: the scheduler at index {i} ({type(scheduler).__name__}) has no "
                "`optimizer` attribute; pass lr schedulers"
            )
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{owner} does not support `ReduceLROnPlateau` (its step() needs the metric), "
                f"but got one at index {i}; step it separately"
            )
        if optimizer != scheduler.optimizer:
            raise ValueError(
                f"{owner} expects all schedulers to belong to the same optimizer, but the "
                f"scheduler {type(scheduler).__name__} at index {i} has another one"
            )


class _OfSchedulers(LRScheduler):
    """The state_dict of a scheduler made of schedulers holds theirs, in order."""

    _schedulers: Sequence

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        state_dict["_schedulers"] = saved
        for scheduler, state in zip(self._schedulers, saved):
            scheduler.load_state_dict(state)


class SequentialLR(_OfSchedulers):
    """`schedulers[0]` until epoch `milestones[0]`, then `schedulers[1]` (started afresh from
    the groups' initial lr) until `milestones[1]`, and so on. Make the schedulers first, then
    this: it undoes the first step each of them took at construction, as PyTorch's does."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: list[LRScheduler],
        milestones: list[int],
        last_epoch: int = -1,
    ) -> None:
        _check_schedulers("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "SequentialLR expects one milestone fewer than schedulers, but got "
                f"{len(schedulers)} schedulers and {len(milestones)} milestones"
            )
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            set_group_value(group, "lr", group["initial_lr"])
        self.recursive_undo()
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def recursive_undo(self, sched: Any = None) -> None:
        """Take back the construction step of every scheduler inside (nested ones too)."""
        scheduler = self if sched is None else sched
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self.recursive_undo(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self) -> None:  # type: ignore[override]
        """One epoch on: the scheduler whose turn it is steps (restarting at its milestone)."""
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_OfSchedulers):
    """Steps every scheduler in turn at each `step()`."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if len(schedulers) < 1:
            raise ValueError("ChainedScheduler expects at least one scheduler to be chained")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers("ChainedScheduler", optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")

    def step(self) -> None:  # type: ignore[override]
        """Step every scheduler, in order."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = group_values(self._schedulers[-1].optimizer, "lr")
