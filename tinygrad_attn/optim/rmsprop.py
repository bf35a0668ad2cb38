"""`RMSprop`, as `torch.optim.RMSprop` (arguments, defaults, checks, state, `centered`,
`momentum`, `maximize`), computed in PyTorch's order of operations.

This module must not know about flat layouts beyond what `FlatGroup` offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..tensor import Tensor
from .flat import FlatGroup, lerp_, muladd
from .optimizer import Optimizer
from .options import as_float, check_flags, check_min

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """RMSprop, as `torch.optim.RMSprop`; for each parameter with a gradient:

        g = -grad if maximize else grad;   g = g + weight_decay * p      (if weight_decay != 0)
        v = alpha * v + (1 - alpha) * g * g
        avg = sqrt(v - g_avg^2) + eps, g_avg = lerp(g_avg, g, 1 - alpha)  (centered)
        avg = sqrt(v) + eps                                               (otherwise)
        buf = momentum * buf + g / avg;  p = p - lr * buf                 (momentum > 0)
        p = p - lr * g / avg                                              (otherwise)

    `state[p]`: `step`, `square_avg` (v), `momentum_buffer` (momentum > 0), `grad_avg`
    (centered). As in Adam, multiply-adds that PyTorch fuses are rounded twice here (flat.py),
    but for the centered variance v - g_avg^2, whose cancellation would magnify the difference.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_min("RMSprop", "learning rate", "lr", lr)
        check_min("RMSprop", "epsilon value", "eps", eps)
        check_min("RMSprop", "momentum value", "momentum", momentum)
        check_min("RMSprop", "weight_decay value", "weight_decay", weight_decay)
        check_min("RMSprop", "alpha value", "alpha", alpha)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "alpha": alpha,
            "eps": eps,
            "centered": centered,
            "weight_decay": weight_decay,
            "capturable": capturable,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
        }
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_flags("RMSprop", group)

    def _state_names(self, group: dict[str, Any]) -> tuple:
        names = ("square_avg",)
        names += ("momentum_buffer",) if group["momentum"] > 0 else ()
        return names + (("grad_avg",) if group["centered"] else ())

    def _update(self, flat: FlatGroup, group: dict[str, Any]) -> None:
        lr, alpha, eps = as_float(group["lr"]), group["alpha"], group["eps"]
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        g, work, scalar = flat.grad, flat.scratch("work"), flat.dtype.type
        flat.count_step()
        if group["maximize"]:
            np.negative(g, out=g)
        if weight_decay != 0:
            g += np.multiply(flat.gather_params(), scalar(weight_decay), out=work)
        v = flat.buffers["square_avg"]
        v *= scalar(alpha)
        np.multiply(g, scalar(1 - alpha), out=work)
        work *= g
        v += work  # alpha * v + ((1 - alpha) * g) * g
        avg = flat.scratch("avg")
        if group["centered"]:
            g_avg = flat.buffers["grad_avg"]
            lerp_(g_avg, g, 1 - alpha, work)
            # v - g_avg^2 cancels, so its multiply-add is fused as in PyTorch (one rounding)
            muladd(np.negative(g_avg, out=work), g_avg, v, avg, flat.wide)
            np.sqrt(avg, out=avg)
        else:
            np.sqrt(v, out=avg)
        avg += scalar(eps)
        if momentum > 0:
            buf = flat.buffers["momentum_buffer"]
            buf *= scalar(momentum)
            buf += np.divide(g, avg, out=work)  # momentum * buf + g / avg
            np.multiply(buf, scalar(-lr), out=work)
        else:
            np.multiply(g, scalar(-lr), out=work)
            work /= avg  # (-lr * g) / avg, in PyTorch's order
        flat.add_to_params(work)
