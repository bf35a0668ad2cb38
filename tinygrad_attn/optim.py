"""Optimizers: SGD (with momentum) and Adam, with PyTorch's exact update formulas.

An optimizer reads each parameter's `.grad` and changes its `.data`; it never builds graph
nodes and never computes gradients. Arrays saved for backward are read-only while a graph
holds them (e.g. after `backward(retain_graph=True)`): such a parameter gets a new array
(`p.data = p.data - update`), so the saved one stays intact; any other is updated in place.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .tensor import Tensor

__all__ = ["SGD", "Adam", "Optimizer"]


def _describe(value: Any) -> str:
    if isinstance(value, Tensor):
        kind = "a non-leaf Tensor" if not value.is_leaf else "a Tensor"
        return f"{kind} of dtype {value.dtype}, requires_grad={value.requires_grad}"
    return type(value).__name__


def _subtract(param: Tensor, update: np.ndarray) -> None:
    """param.data -= update, in place unless a live graph holds the array read-only."""
    if param.data.flags.writeable:
        param.data -= update
    else:
        param.data = (param.data - update).astype(param.dtype, copy=False)


class Optimizer:
    """Base class: keeps the parameter list and per-parameter `state`; subclasses define
    `step()`. `params` may be any iterable of float leaf Tensors with requires_grad (a
    generator such as `model.parameters()` is fine)."""

    def __init__(self, params: Iterable[Tensor], lr: float) -> None:
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
                f"{name}: params must be an iterable of Tensors (e.g. model.parameters()), "
                f"got {type(params).__name__}"
            ) from None
        if not params:
            raise ValueError(f"{name}: got an empty parameter list; nothing to optimize")
        seen: dict = {}
        for position, p in enumerate(params):
            if not (
                isinstance(p, Tensor) and p.dtype.kind == "f" and p.requires_grad and p.is_leaf
            ):
                raise TypeError(
                    f"{name}: parameter {position} must be a float leaf Tensor with "
                    f"requires_grad=True, got {_describe(p)}"
                )
            if id(p) in seen:
                raise ValueError(
                    f"{name}: parameter {position} ({p.name or 'unnamed'}) is the same tensor as "
                    f"parameter {seen[id(p)]}; pass each parameter once"
                )
            seen[id(p)] = position
        if lr < 0:
            raise ValueError(f"{name}: lr must be >= 0, got {lr}")
        self.params: list[Tensor] = params
        self.lr = lr
        # Per-parameter buffers, by position in `params` (e.g. {"exp_avg": ..., "step": 3}).
        self.state: list[dict] = [{} for _ in params]

    def zero_grad(self) -> None:
        """Set every parameter's `.grad` to None (PyTorch's default)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define step()")

    def _gradients(self, weight_decay: float) -> Iterator[tuple[Tensor, dict, np.ndarray]]:
        """(param, its state, grad + weight_decay * param) for each param that has a grad."""
        for p, state in zip(self.params, self.state):
            if p.grad is None:
                continue
            g = p.grad
            if weight_decay:
                g = g + weight_decay * p.data
            yield p, state, g

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self.params)} parameters, lr={self.lr})"


class SGD(Optimizer):
    """Stochastic gradient descent, as `torch.optim.SGD` (no dampening, no Nesterov):

    g = grad + weight_decay * p
    buf = g                      (first step)
    buf = momentum * buf + g     (later steps; only when momentum != 0)
    p = p - lr * buf             (or lr * g without momentum)
    """

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float,
        momentum: float = 0.0,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, lr)
        if momentum < 0:
            raise ValueError(f"SGD: momentum must be >= 0, got {momentum}")
        if weight_decay < 0:
            raise ValueError(f"SGD: weight_decay must be >= 0, got {weight_decay}")
        self.momentum = momentum
        self.weight_decay = weight_decay

    def step(self) -> None:
        """Update every parameter that has a gradient (those with `grad is None` are skipped)."""
        for p, state, g in self._gradients(self.weight_decay):
            if self.momentum:
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = g.copy()
                else:
                    buf *= self.momentum
                    buf += g
                g = buf
            _subtract(p, self.lr * g)


class Adam(Optimizer):
    """Adam, as `torch.optim.Adam` (amsgrad=False), per parameter with its own step count t:

    g = grad + weight_decay * p                      (L2 penalty, not AdamW)
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g^2
    p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    """

    def __init__(
        self,
        params: Iterable[Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, lr)
        beta1, beta2 = betas
        for i, beta in enumerate((beta1, beta2)):
            if not 0 <= beta < 1:
                raise ValueError(f"Adam: betas[{i}] must be in [0, 1), got {beta}")
        if eps < 0:
            raise ValueError(f"Adam: eps must be >= 0, got {eps}")
        if weight_decay < 0:
            raise ValueError(f"Adam: weight_decay must be >= 0, got {weight_decay}")
        self.betas = (beta1, beta2)
        self.eps = eps
        self.weight_decay = weight_decay

    def step(self) -> None:
        """Update every parameter that has a gradient (those with `grad is None` are skipped)."""
        beta1, beta2 = self.betas
        for p, state, g in self._gradients(self.weight_decay):
            if not state:
                state["step"] = 0
                state["exp_avg"] = np.zeros_like(p.data)  # m
                state["exp_avg_sq"] = np.zeros_like(p.data)  # v
            state["step"] += 1
            t = state["step"]
            m, v = state["exp_avg"], state["exp_avg_sq"]
            m *= beta1
            m += (1 - beta1) * g
            v *= beta2
            v += (1 - beta2) * (g * g)
            step_size = self.lr / (1 - beta1**t)
            denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + self.eps
            _subtract(p, step_size * m / denom)
