"""The schedules that cycle, as `torch.optim.lr_scheduler`'s: CyclicLR, OneCycleLR and
CosineAnnealingWarmRestarts. They compute each lr from the epoch count (not from the current
lr), and CyclicLR / OneCycleLR also cycle the momentum (`momentum`, or Adam's beta1), as PyTorch's.

This module must not touch anything in a param group but `lr`, the momentum and the keys
PyTorch's versions add (`max_lr`, `min_lr`, `max_momentum`, `base_momentum`, `initial_lr`).
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from functools import partial
from typing import Any

from .optimizer import Optimizer
from .scheduler import (
    LRScheduler,
    _Flag,
    check_optimizer,
    format_param,
    group_values,
    set_group_value,
)

__all__ = ["CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR"]


def _phase(end_step: float, start_lr: str, end_lr: str, start: str, end: str) -> dict:
    """One phase of OneCycleLR: up to `end_step`, from group[start_lr] to group[end_lr], the
    momentum from group[start + "_momentum"] to group[end + "_momentum"]."""
    return {
        "end_step": end_step,
        "start_lr": start_lr,
        "end_lr": end_lr,
        "start_momentum": f"{start}_momentum",
        "end_momentum": f"{end}_momentum",
    }


def _set_momentum(group: dict, use_beta1: bool, momentum: float) -> None:
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _momentum_kind(owner: str, optimizer: Optimizer) -> bool:
    """True if the optimizer's momentum is Adam's beta1, False if it is SGD's `momentum`."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            f"{owner}: optimizer must support momentum or beta1 with `cycle_momentum` option "
            f"enabled ({type(optimizer).__name__} has neither); pass cycle_momentum=False"
        )
    return "betas" in optimizer.defaults


class CyclicLR(LRScheduler):
    """The lr goes between `base_lr` and `max_lr` and back, `step_size_up` steps up and
    `step_size_down` down (call `step()` after every batch), the amplitude scaled per cycle
    ('triangular': 1, 'triangular2': halved each cycle) or per step ('exp_range': gamma ** step),
    or by your `scale_fn`; with `cycle_momentum`, the momentum moves the opposite way."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                set_group_value(group, "lr", lr)
        self.max_lrs = format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError(
                f"CyclicLR: mode {mode!r} is not 'triangular', 'triangular2' or 'exp_range', "
                "and no scale_fn is given"
            )
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_kind("CyclicLR", optimizer)
            self.base_momentums = format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(
                    self.max_momentums, self.base_momentums, optimizer.param_groups
                ):
                    _set_momentum(group, self.use_beta1, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref = self._triangular_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref = self._triangular2_scale_fn
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(self._exp_range_scale_fn, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) `x`."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    @staticmethod
    def _triangular_scale_fn(x: float) -> float:
        return 1.0

    @staticmethod
    def _triangular2_scale_fn(x: float) -> float:
        return 1 / (2.0 ** (x - 1))

    @staticmethod
    def _exp_range_scale_fn(gamma: float, x: float) -> float:
        return gamma**x

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle  # where in the cycle, 0 to 1
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        at = cycle if self.scale_mode == "cycle" else self.last_epoch
        lrs = []
        for base_lr, max_lr in zip(self.base_lrs, self.max_lrs):
            base_height = (max_lr - base_lr) * scale_factor
            lrs.append(base_lr + base_height * self.scale_fn(at))
        if self.cycle_momentum:
            for bottom, top, group in zip(
                self.base_momentums, self.max_momentums, self.optimizer.param_groups
            ):
                base_height = (top - bottom) * scale_factor
                _set_momentum(group, self.use_beta1, top - base_height * self.scale_fn(at))
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        state.pop("_scale_fn_ref", None)
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (
            fn.__dict__.copy()
            if fn is not None and not isinstance(fn, types.FunctionType)
            else None
        )
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        fn = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the lr rises from max_lr / div_factor to `max_lr` over the first
    `pct_start` of `total_steps` (or epochs * steps_per_epoch), then falls to initial_lr /
    final_div_factor (cosine or linear), the momentum moving the opposite way; with
    `three_phase`, it comes back to initial_lr before the final fall. Step after every batch;
    stepping past `total_steps` is a ValueError, as in PyTorch."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(
                    f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}"
                )
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError(
                "OneCycleLR: you must define either total_steps OR (epochs AND steps_per_epoch)"
            )
        rise = _phase(
            float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max", "base"
        )
        if three_phase:
            self._schedule_phases = [
                rise,
                _phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base", "max"),
                _phase(self.total_steps - 1, "initial_lr", "min_lr", "max", "max"),
            ]  # fmt: skip
        else:
            self._schedule_phases = [
                rise, _phase(self.total_steps - 1, "max_lr", "min_lr", "base", "max")
            ]  # fmt: skip
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_kind("OneCycleLR", optimizer)
            tops = format_param("max_momentum", optimizer, max_momentum)
            bottoms = format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for top, bottom, group in zip(tops, bottoms, optimizer.param_groups):
                    _set_momentum(group, self.use_beta1, top)
                    group["max_momentum"] = top
                    group["base_momentum"] = bottom
        super().__init__(optimizer, last_epoch)

    def _anneal_func(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps} (OneCycleLR: make it as many as scheduler.step() calls)"
            )
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step <= end_step or i == last:
                    pct = (step - start_step) / (end_step - start_step)
                    lr = self._anneal_func(group[phase["start_lr"]], group[phase["end_lr"]], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal_func(
                            group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                        )
                    break
                start_step = phase["end_step"]
            lrs.append(lr)
            if self.cycle_momentum:
                _set_momentum(group, self.use_beta1, momentum)
        return lrs


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from initial_lr to `eta_min` over T_0 epochs, then a restart, each
    period T_mult times the last: lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur /
    T_i)) / 2. `step(epoch)` may take a fractional epoch (e.g. epoch + i / iters), as PyTorch's.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        cosine = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cosine / 2 for base in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """One epoch on, or to `epoch` (which may be fractional)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        with _Flag(self, "_get_lr_called_within_step"):
            lrs = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
            set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")
