"""The epoch-driven schedules of `torch.optim.lr_scheduler`: LambdaLR, MultiplicativeLR, StepLR,
MultiStepLR, ConstantLR, LinearLR, ExponentialLR, PolynomialLR, CosineAnnealingLR.

Each computes the next lr from the group's current one (the chainable form, scheduler.py) with
PyTorch's formulas written in PyTorch's order of operations, so the lrs are the same floats,
step after step; `_get_closed_form_lr` gives the lr at `last_epoch` from `base_lrs` where
PyTorch has one.

This module must not touch anything in a param group but its `lr`.
"""

from __future__ import annotations

import math
import types
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from .optimizer import Optimizer
from .scheduler import LRScheduler, check_optimizer, group_values

__all__ = [
    "ConstantLR",
    "CosineAnnealingLR",
    "ExponentialLR",
    "LambdaLR",
    "LinearLR",
    "MultiStepLR",
    "MultiplicativeLR",
    "PolynomialLR",
    "StepLR",
]


def _lambdas(owner: str, optimizer: Optimizer, lr_lambda: Any, check: bool) -> list:
    groups = len(optimizer.param_groups)
    if not isinstance(lr_lambda, (list, tuple)):
        lambdas = [lr_lambda] * groups
    elif len(lr_lambda) != groups:
        raise ValueError(
            f"{owner}: expected {groups} lr_lambdas (one per parameter group), but got "
            f"{len(lr_lambda)}"
        )
    else:
        lambdas = list(lr_lambda)
    for fn in lambdas if check else ():
        if not callable(fn):
            raise TypeError(f"{owner}: lr_lambda should be a function, but got {type(fn).__name__}")
    return lambdas


class _WithLambdas(LRScheduler):
    """What LambdaLR and MultiplicativeLR share: one function per group (or one for all),
    checked to be callable where PyTorch checks (`_check_callable`); the functions are not
    saved in the state_dict (a callable object's `__dict__` is, as in PyTorch)."""

    lr_lambdas: list
    _check_callable = False

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | list[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        owner = type(self).__name__
        self.lr_lambdas = _lambdas(owner, optimizer, lr_lambda, check=self._check_callable)
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [
            None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
            for fn in self.lr_lambdas
        ]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        saved = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        state_dict["lr_lambdas"] = saved
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_WithLambdas):
    """lr = initial_lr * lr_lambda(epoch) (one function, or a list of one per group)."""

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_WithLambdas):
    """lr = lr * lr_lambda(epoch) at every step after the first (chainable)."""

    _check_callable = True

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [
            group["lr"] * fn(self.last_epoch)
            for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)
        ]


class StepLR(LRScheduler):
    """lr = lr * gamma every `step_size` epochs (closed form: initial_lr * gamma ** (epoch //
    step_size))."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = lr * gamma at each milestone epoch (a milestone given twice: gamma ** 2)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Iterable[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return group_values(self.optimizer, "lr")
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [
            base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs
        ]


class ConstantLR(LRScheduler):
    """lr = initial_lr * factor until epoch `total_iters`, then initial_lr."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if factor > 1.0 or factor < 0:
            raise ValueError(
                f"ConstantLR: the multiplicative factor must be between 0 and 1, got {factor}"
            )
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in groups]
        if self.last_epoch != self.total_iters:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * (1.0 / self.factor) for group in groups]

    def _get_closed_form_lr(self) -> list:
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """lr goes linearly from initial_lr * start_factor to initial_lr * end_factor over
    `total_iters` epochs, then stays."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError(
                "LinearLR: the starting multiplicative factor must be greater than 0 and at "
                f"most 1, got {start_factor}"
            )
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError(
                f"LinearLR: the ending multiplicative factor must be between 0 and 1, got "
                f"{end_factor}"
            )
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        span = self.end_factor - self.start_factor
        # the ratio of this epoch's factor to the previous one's
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [group["lr"] * ratio for group in groups]

    def _get_closed_form_lr(self) -> list:
        span = self.end_factor - self.start_factor
        done = min(self.total_iters, self.last_epoch)
        return [
            base * (self.start_factor + span * done / self.total_iters) for base in self.base_lrs
        ]


class ExponentialLR(LRScheduler):
    """lr = lr * gamma at every step after the first."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base * self.gamma**self.last_epoch for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power until `total_iters`, then 0."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        now = 1.0 - self.last_epoch / self.total_iters
        before = 1.0 - (self.last_epoch - 1) / self.total_iters
        factor = (now / before) ** self.power
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        done = min(self.total_iters, self.last_epoch)
        return [base * (1.0 - done / self.total_iters) ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr follows half a cosine from initial_lr down to `eta_min` over `T_max` epochs (and back
    up over the next T_max), each step from the current lr:

        lr = eta_min + (lr - eta_min) * (1 + cos(pi * t / T_max)) / (1 + cos(pi * (t-1) / T_max))

    closed form: eta_min + (initial_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2.
    """

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        groups = self.optimizer.param_groups
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        if self._step_count == 1 and t > 0:  # the first step of a resumed schedule
            return [
                low + (base - low) * (1 + math.cos(t * math.pi / T)) / 2 for base in self.base_lrs
            ]
        if (t - 1 - T) % (2 * T) == 0:  # at the bottom, where the ratio below is 0 / 0
            return [
                g["lr"] + (base - low) * (1 - math.cos(math.pi / T)) / 2
                for base, g in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
        return [ratio * (g["lr"] - low) + low for g in groups]

    def _get_closed_form_lr(self) -> list:
        t, T, low = self.last_epoch, self.T_max, self.eta_min
        return [low + (base - low) * (1 + math.cos(math.pi * t / T)) / 2 for base in self.base_lrs]
