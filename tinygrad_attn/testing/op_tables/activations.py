"""Op-table rows for the activation functions of `functional/activations.py` that are written
with other ops (selu, celu, mish, relu6, hardsigmoid, hardswish, logsigmoid, softsign,
tanhshrink, threshold, glu, softmin) and for the losses and distances built the same way
(kl_div, huber_loss, pairwise_distance). Each reference is written in NumPy. The piecewise
ones are checked on values off their corners (gradients at a corner are PyTorch's choice,
pinned by tests/one_meaning_cases.py against PyTorch itself).

Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

import numpy as np

from ... import functional as F
from ..opspec import AWAY_FROM_ZERO, POSITIVE, REAL, Case, OpSpec, Values, fixed, register
from .elementwise import np_sigmoid, unary

# Off every corner (-3, 0, 3, 6) by more than a finite-difference step: each branch once.
OFF_CORNERS = fixed(np.array([[-4.5, -2.5, -0.7, 0.4], [2.2, 3.7, 5.1, 7.3]]))

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _np_softplus(x: np.ndarray) -> np.ndarray:
    return np.where(x > 20, x, np.log1p(np.exp(np.minimum(x, 20))))


def _np_selu(x: np.ndarray) -> np.ndarray:
    return _SELU_SCALE * np.where(x > 0, x, _SELU_ALPHA * (np.exp(np.minimum(x, 0)) - 1))


def _np_celu(x: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    return np.where(x > 0, x, alpha * (np.exp(np.minimum(x, 0) / alpha) - 1))


def _np_mish(x: np.ndarray) -> np.ndarray:
    return x * np.tanh(_np_softplus(x))


def _np_relu6(x: np.ndarray) -> np.ndarray:
    return np.clip(x, 0, 6)


def _np_hardsigmoid(x: np.ndarray) -> np.ndarray:
    return np.clip(x / 6 + 0.5, 0, 1)


def _np_hardswish(x: np.ndarray) -> np.ndarray:
    return x * _np_hardsigmoid(x)


def _np_logsigmoid(x: np.ndarray) -> np.ndarray:
    return np.log(np_sigmoid(x))


def _np_softsign(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.abs(x))


def _np_tanhshrink(x: np.ndarray) -> np.ndarray:
    return x - np.tanh(x)


def _np_threshold(x: np.ndarray, threshold: float, value: float) -> np.ndarray:
    return np.where(x > threshold, x, value)


def _np_glu(x: np.ndarray, dim: int = -1) -> np.ndarray:
    a, b = np.split(x, 2, axis=dim)
    return a * np_sigmoid(b)


def _np_softmin(x: np.ndarray, dim: int) -> np.ndarray:
    e = np.exp(-x - np.max(-x, axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _row(name: str, fn, reference, cases: tuple) -> None:
    register(OpSpec(name, fn, reference, cases, lambda c: c.pick(cases), "functional"))


def _smooth(name: str, fn, reference, domain=REAL) -> None:
    """A smooth activation: the elementwise cases of `unary`, as a row of `functional`."""
    spec = unary(name, fn, reference, domain)
    register(OpSpec(name, fn, reference, spec.cases[:2], spec.generate, "functional"))


_smooth("F.selu", F.selu, _np_selu, AWAY_FROM_ZERO)
_smooth("F.mish", F.mish, _np_mish)
_smooth("F.logsigmoid", F.logsigmoid, _np_logsigmoid)
_smooth("F.softsign", F.softsign, _np_softsign, AWAY_FROM_ZERO)
_smooth("F.tanhshrink", F.tanhshrink, _np_tanhshrink)
_row(
    "F.celu",
    F.celu,
    _np_celu,
    (
        Case("(3,4) alpha 0.7", (Values((3, 4), AWAY_FROM_ZERO),), {"alpha": 0.7}),
        Case("(3,4) alpha -1.5", (Values((3, 4), AWAY_FROM_ZERO),), {"alpha": -1.5}),
    ),
)
for _name, _fn, _reference in (
    ("F.relu6", F.relu6, _np_relu6),
    ("F.hardsigmoid", F.hardsigmoid, _np_hardsigmoid),
    ("F.hardswish", F.hardswish, _np_hardswish),
):
    _row(_name, _fn, _reference, (Case("every branch", (OFF_CORNERS,)),))
_row(
    "F.threshold",
    F.threshold,
    _np_threshold,
    (Case("(2,4) at 0.1, value -2", (OFF_CORNERS,), {"threshold": 0.1, "value": -2.0}),),
)
_row(
    "F.glu",
    F.glu,
    _np_glu,
    (
        Case("(3,4) last dim", (Values((3, 4)),)),
        Case("(4,3,2) dim 0", (Values((4, 3, 2)),), {"dim": 0}),
    ),
)
_row(
    "F.softmin",
    F.softmin,
    _np_softmin,
    (Case("(2,3,4) dim 1", (Values((2, 3, 4)),), {"dim": 1}),),
)


# ---------------------------------------------------------------- losses and distances
def _kl_div(logits, target, reduction: str = "batchmean", log_target: bool = False):
    return F.kl_div(logits.log_softmax(-1), target, reduction=reduction, log_target=log_target)


def _np_kl_div(logits, target, reduction: str = "batchmean", log_target: bool = False):
    shifted = logits - logits.max(-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    if log_target:
        loss = np.exp(target) * (target - logp)
    else:
        loss = np.where(target == 0, 0.0, target * np.log(np.where(target == 0, 1, target)))
        loss = loss - target * logp
    if reduction == "batchmean":
        return loss.sum() / logits.shape[0]
    return loss.sum() if reduction == "sum" else loss


def _np_huber(a, b, reduction: str = "mean", delta: float = 1.0):
    d = np.abs(a - b)
    loss = np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _pairwise(a, b, **options):  # (a - (-b): positive a and b keep off the norm's kink at 0)
    return F.pairwise_distance(a, -b, **options)


def _np_pairwise(a, b, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
    return np.sum(np.abs(a + b + eps) ** p, axis=-1, keepdims=keepdim) ** (1 / p)


_probabilities = fixed(np.array([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]]), False)  # (a 0: no d/dp)
_row(
    "F.kl_div",
    _kl_div,
    _np_kl_div,
    (
        Case("of log_softmax, a zero target", (Values((2, 3)), _probabilities)),
        Case(
            "log targets, sum",
            (Values((2, 3)), Values((2, 3))),
            {"log_target": True, "reduction": "sum"},
        ),
    ),
)
_row(
    "F.huber_loss",
    F.huber_loss,
    _np_huber,
    (
        Case("(3,4)", (Values((3, 4)), Values((3, 4)))),
        Case(
            "(3,4) delta 0.3, sum",
            (Values((3, 4)), Values((3, 4))),
            {"delta": 0.3, "reduction": "sum"},
        ),
    ),
)
_row(
    "F.pairwise_distance",
    _pairwise,
    _np_pairwise,
    (
        Case("(3,4) p=2", (Values((3, 4), POSITIVE), Values((3, 4), POSITIVE))),
        Case(
            "(3,4) p=3 with (4,), keepdim",
            (Values((3, 4), POSITIVE), Values((4,), POSITIVE)),
            {"p": 3.0, "keepdim": True},
        ),
    ),
)
