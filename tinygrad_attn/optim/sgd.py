"""`SGD`: stochastic gradient descent with momentum, dampening, Nesterov momentum, weight decay
and `maximize`, as `torch.optim.SGD` (its arguments, defaults, checks, state and roundings).

This module must not know about flat layouts beyond what `FlatGroup` offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .flat import FlatGroup, muladd
from .optimizer import Optimizer
from .options import as_float, check_flags, check_min

__all__ = ["SGD"]


class SGD(Optimizer):
    """Stochastic gradient descent, as `torch.optim.SGD`; for each parameter with a gradient:

        g = -grad if maximize else grad
        g = g + weight_decay * p                         (if weight_decay != 0)
        buf = g                                          (first step; only if momentum != 0)
        buf = momentum * buf + (1 - dampening) * g       (later steps)
        g = g + momentum * buf if nesterov else buf
        p = p - lr * g

    `state[p]["momentum_buffer"]` is `buf` (no state at all without momentum, as in PyTorch).
    `foreach` and `fused` are accepted and change nothing (one implementation here);
    `differentiable=True` is refused (the step is not part of any graph here).
    """

    _counts_steps = False

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Any = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float | Any = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_min("SGD", "learning rate", "lr", lr, nan_ok=True)
        check_min("SGD", "momentum value", "momentum", momentum, nan_ok=True)
        check_min("SGD", "weight_decay value", "weight_decay", weight_decay, nan_ok=True)
        defaults = {
            "lr": lr,
            "momentum": momentum,
            "dampening": dampening,
            "weight_decay": weight_decay,
            "nesterov": nesterov,
            "maximize": maximize,
            "foreach": foreach,
            "differentiable": differentiable,
            "fused": fused,
        }
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(
                "SGD: Nesterov momentum requires a momentum and zero dampening (got momentum="
                f"{momentum}, dampening={dampening})"
            )
        super().__init__(params, defaults)

    def _check_group(self, group: dict[str, Any]) -> None:
        check_flags("SGD", group)

    def _state_names(self, group: dict[str, Any]) -> tuple:
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    def _update(self, flat: FlatGroup, group: dict[str, Any]) -> None:
        lr, momentum = as_float(group["lr"]), group["momentum"]
        weight_decay, dampening = as_float(group["weight_decay"]), group["dampening"]
        g, work, wide = flat.grad, flat.scratch("work"), flat.wide
        if group["maximize"]:
            np.negative(g, out=g)
        if weight_decay != 0:
            muladd(flat.gather_params(), weight_decay, g, g, wide)  # g + wd * p
        if momentum != 0:
            buf = flat.buffers["momentum_buffer"]
            buf *= flat.dtype.type(momentum)
            muladd(g, 1 - dampening, buf, buf, wide)  # momentum * buf + (1 - dampening) * g
            for i in flat.fresh:  # a parameter's first step: buf = g
                a, b = flat.bounds[i]
                buf[a:b] = g[a:b]
            flat.fresh = []
            if group["nesterov"]:
                muladd(buf, momentum, g, work, wide)  # g + momentum * buf
                g = work
            else:
                g = buf
        if flat.dtype == np.float32:  # p + (-lr) * g with one rounding, in add_to_params
            np.multiply(g, np.float64(np.float32(-lr)), out=wide, dtype=np.float64)
            flat.add_to_params(wide)
        else:
            np.multiply(g, flat.dtype.type(-lr), out=work)
            flat.add_to_params(work)
