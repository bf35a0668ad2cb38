"""`Adagrad`, as `torch.optim.Adagrad` (arguments, defaults, checks, state made at construction
with `initial_accumulator_value`, `lr_decay`, `maximize`), in PyTorch's order of operations.

This module must not know about flat layouts beyond what `FlatGroup` offers.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ..creation import from_numpy
from ..tensor import Tensor
from .flat import FlatGroup
from .optimizer import Optimizer
from .options import as_float, check_flags, check_min

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Adagrad, as `torch.optim.Adagrad`; for each parameter with a gradient, t its step:

        g = -grad if maximize else grad;   g = g + weight_decay * p      (if weight_decay != 0)
        sum = sum + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)

    `state[p]` (`step`, `sum` = initial_accumulator_value) is made for every parameter at
    construction, as PyTorch does. `foreach` and `fused` are accepted and change nothing.
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_min("Adagrad", "learning rate", "lr", lr)
        check_min("Adagrad", "lr_decay value", "lr_decay", lr_decay)
        check_min("Adagrad", "weight_decay value", "weight_decay", weight_decay)
        check_min(
            "Adagrad",
            "initial_accumulator_value value",
            "initial_accumulator_value",
            initial_accumulator_value,
        )
        check_min("Adagrad", "epsilon value", "eps", eps)
        defaults = {
            "lr": lr,
            "lr_decay": lr_decay,
            "eps": eps,
            "weight_decay": weight_decay,
            "initial_accumulator_value": initial_accumulator_value,
            "foreach": foreach,
            "maximize": maximize,
            "differentiable": differentiable,
            "fused": fused,
        }
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["step"] = from_numpy(np.zeros((), np.float32))
                self.state[p]["sum"] = from_numpy(
                    np.full(p.shape, initial_accumulator_value, dtype=p.dtype)
                )

    def _check_group(self, group: dict[str, Any]) -> None:
        check_flags("Adagrad", group)

    def _state_names(self, group: dict[str, Any]) -> tuple:
        return ("sum",)

    def _update(self, flat: FlatGroup, group: dict[str, Any]) -> None:
        lr, lr_decay, eps = as_float(group["lr"]), group["lr_decay"], group["eps"]
        weight_decay = group["weight_decay"]
        g, work, scalar = flat.grad, flat.scratch("work"), flat.dtype.type
        state_sum = flat.buffers["sum"]
        for i in flat.fresh:  # a parameter added later: PyTorch starts it from the default
            a, b = flat.bounds[i]
            state_sum[a:b] = self.defaults["initial_accumulator_value"]
        flat.fresh = []
        steps = flat.count_step()
        if group["maximize"]:
            np.negative(g, out=g)
        if weight_decay != 0:
            g += np.multiply(flat.gather_params(), scalar(weight_decay), out=work)
        rates = [lr / (1 + (t - 1) * lr_decay) for t in steps]
        state_sum += np.multiply(g, g, out=work)  # sum + g * g
        std = np.sqrt(state_sum, out=flat.scratch("std"))
        std += scalar(eps)
        if min(rates) == max(rates):
            np.multiply(g, scalar(-rates[0]), out=work)
        else:  # parameters at different steps: one rate per element
            np.multiply(g, -flat.per_element(rates), out=work)
        work /= std  # (-clr * g) / std, in PyTorch's order
        flat.add_to_params(work)
