"""`Adam` and `AdamW`, as `torch.optim.Adam` / `torch.optim.AdamW` (arguments, defaults, checks,
state, `amsgrad`, `maximize`, `decoupled_weight_decay`), computed in PyTorch's order and rounding.

This module must not know about flat layouts beyond what `FlatGroup` offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .flat import FlatGroup, lerp_
from .optimizer import Optimizer
from .options import as_float, check_betas, check_flags, check_min

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Adam, as `torch.optim.Adam`; for each parameter with a gradient, t its own step count:

        g = -grad if maximize else grad
        p = p * (1 - lr * weight_decay)           (decoupled_weight_decay, i.e. AdamW)
        g = g + weight_decay * p                  (otherwise: an L2 penalty)
        m = m + (1 - beta1) * (g - m)             (lerp: beta1 * m + (1 - beta1) * g)
        v = beta2 * v + (1 - beta2) * g * g
        v_max = max(v_max, v)                     (amsgrad; v_max replaces v below)
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

    `state[p]`: `step` (a 0-d float32 Tensor), `exp_avg` (m), `exp_avg_sq` (v) and, with
    amsgrad, `max_exp_avg_sq`. `lr` may be a one-element Tensor (a scheduler then fills it in
    place). `foreach`, `fused` and `capturable` are accepted and change nothing (one
    implementation here); `differentiable=True` is refused (the step is not part of any graph).

    Bits: PyTorch's order of operations; PyTorch's CPU kernels fuse the multiply-adds of the
    moments (one rounding), and its `sqrt` on x86 (MKL's) is not always correctly rounded, so
    some elements differ from PyTorch's in the last bit (flat.py says why we do not pay for
    fused multiply-adds here).
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        name = type(self).__name__
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError(
                f"{name}: lr as a Tensor is not supported for capturable=False and foreach=True"
            )
        check_min(name, "learning rate", "lr", lr)
        check_min(name, "epsilon value", "eps", eps)
        betas = check_betas(name, betas)
        check_min(name, "weight_decay value", "weight_decay", weight_decay)
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "amsgrad": amsgrad,
            "maximize": maximize,
            "foreach": foreach,
            "capturable": capturable,
            "differentiable": differentiable,
            "fused": fused,
            "decoupled_weight_decay": decoupled_weight_decay,
        }
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_flags(type(self).__name__, group)

    def _state_names(self, group: dict[str, Any]) -> tuple:
        if group["amsgrad"]:
            return ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
        return ("exp_avg", "exp_avg_sq")

    def _update(self, flat: FlatGroup, group: dict[str, Any]) -> None:
        beta1, beta2 = (as_float(b) for b in group["betas"])
        lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
        if isinstance(lr, Tensor):  # PyTorch then computes lr's products in lr's dtype
            lr = lr.numpy().reshape(-1)[0]
        m, v = flat.buffers["exp_avg"], flat.buffers["exp_avg_sq"]
        g, work, scalar = flat.grad, flat.scratch("work"), flat.dtype.type
        steps = flat.count_step()
        if group["maximize"]:
            np.negative(g, out=g)
        if weight_decay != 0:
            if group["decoupled_weight_decay"]:
                flat.scale_params(1 - lr * _like(lr, weight_decay))  # p * (1 - lr * wd)
            else:
                g += np.multiply(flat.gather_params(), scalar(weight_decay), out=work)
        lerp_(m, g, 1 - beta1, work)  # m + (1 - beta1) * (g - m)
        v *= scalar(beta2)
        np.multiply(g, scalar(1 - beta2), out=work)
        work *= g
        v += work  # beta2 * v + ((1 - beta2) * g) * g
        if group["amsgrad"]:
            v_max = flat.buffers["max_exp_avg_sq"]
            np.maximum(v_max, v, out=v_max)
            v = v_max
        if min(steps) == max(steps):  # the usual case: one bias correction for all
            step_size, root = _corrections(lr, beta1, beta2, steps[0])
        else:  # parameters that joined at different steps: one factor per element
            per_param = [_corrections(lr, beta1, beta2, t) for t in steps]
            step_size = flat.per_element([s for s, _ in per_param])
            root = flat.per_element([r for _, r in per_param])
        denom = np.sqrt(v, out=work)
        denom /= root if isinstance(root, np.ndarray) else scalar(root)
        denom += scalar(eps)  # sqrt(v) / sqrt(1 - beta2^t) + eps
        update = np.multiply(m, -step_size, out=flat.scratch("update"))
        update /= denom  # (-step_size * m) / denom, in PyTorch's order
        flat.add_to_params(update)


def _like(lr: Any, value: Any) -> Any:
    """`value` in the dtype of a Tensor lr's value (Python float for a float lr)."""
    return type(lr)(value) if isinstance(lr, np.generic) else value


def _corrections(lr: Any, beta1: float, beta2: float, step: float) -> tuple:
    """(lr / (1 - beta1^t), sqrt(1 - beta2^t)), computed as PyTorch computes them (Python
    floats; a Tensor lr's division in its dtype)."""
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    return lr / _like(lr, bias_correction1), bias_correction2**0.5


class AdamW(Adam):
    """AdamW, as `torch.optim.AdamW`: Adam with `decoupled_weight_decay=True` and a default
    `weight_decay` of 0.01, so the weights shrink, p = p * (1 - lr * weight_decay), before the
    Adam update with the plain gradient."""

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-3,
        betas: tuple[float | Tensor, float | Tensor] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params,
            lr,
            betas,
            eps,
            weight_decay,
            amsgrad,
            foreach=foreach,
            maximize=maximize,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=True,
        )
