"""PyTorch's loss modules (`criterion = nn.CrossEntropyLoss()`; `criterion(logits, target)`),
each holding its options and calling the `F` function of the same name. As in `F`, a class
axis is last. No backward code lives here."""

from __future__ import annotations

from typing import Any

from .. import functional as F
from ..tensor import Tensor
from .module import Module


class _Loss(Module):
    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(
                f"{type(self).__name__}: reduction must be 'mean', 'sum' or 'none', got "
                f"{reduction!r}"
            )
        self.reduction = reduction

    def extra_repr(self) -> str:
        return "" if self.reduction == "mean" else f"reduction={self.reduction!r}"


class CrossEntropyLoss(_Loss):
    """`F.cross_entropy(input, target, ...)`: integer class targets, class axis last."""

    def __init__(
        self,
        weight: Any = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(reduction)
        if weight is not None:
            raise ValueError(
                "CrossEntropyLoss: per-class weights are not supported here; use "
                "F.nll_loss(F.log_softmax(logits, -1), target, weight=w), which takes them"
            )
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(
            input, target, self.reduction, self.ignore_index, self.label_smoothing
        )


class NLLLoss(_Loss):
    """`F.nll_loss(input, target, ...)` of log-probabilities."""

    def __init__(self, weight: Any = None, ignore_index: int = -100, reduction="mean") -> None:
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, self.weight, self.ignore_index, self.reduction)


class MSELoss(_Loss):
    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.l1_loss(input, target, self.reduction)


class SmoothL1Loss(_Loss):
    def __init__(self, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__(reduction)
        self.beta = beta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class BCELoss(_Loss):
    """`F.binary_cross_entropy(input, target)` of probabilities in [0, 1]."""

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """`F.binary_cross_entropy_with_logits(input, target)`, stable for any logit."""

    def __init__(self, weight: Any = None, reduction="mean", pos_weight: Any = None) -> None:
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, self.reduction, self.pos_weight
        )
