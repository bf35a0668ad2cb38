"""Op-table rows for PyTorch's `torch.*` functions that are more than a Tensor method under
another name (`torch_functions.py`: einsum, bmm, outer, addmm, sort, logsumexp) and for the
functional forms of `functional/` (losses, normalize, cosine similarity, pad,
embedding). Each reference is written in NumPy.

Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

import numpy as np

from ... import functional as F
from ... import torch_functions as T
from ...tensor import Tensor
from ..opspec import AWAY_FROM_ZERO, DISTINCT, Case, Choices, OpSpec, Values, fixed, register


def _row(name: str, fn, reference, cases: tuple, where: str, doc: str = "") -> None:
    """A row whose random case is one of its hand-picked cases (the shapes are the point)."""
    register(OpSpec(name, fn, reference, cases, lambda c: c.pick(cases), where, doc))


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


# ----------------------------------------------------------------------------- einsum
def _einsum(*operands: Tensor, equation: str) -> Tensor:
    return T.einsum(equation, *operands)


def _np_einsum(*operands: np.ndarray, equation: str) -> np.ndarray:
    return np.einsum(equation, *operands)


def _generate_einsum(c: Choices) -> Case:
    b, h, q, k, d = (c.integer(1, 3) for _ in range(5))
    return Case(
        "",
        (Values((b, h, q, d)), Values((b, h, k, d))),
        {"equation": "bhqd,bhkd->bhqk"},
    )


register(
    OpSpec(
        "Einsum",
        _einsum,
        _np_einsum,
        (
            Case(
                "attention scores",
                (Values((2, 2, 3, 4)), Values((2, 2, 5, 4))),
                {"equation": "bhqd,bhkd->bhqk"},
            ),
            Case("matrix product", (Values((2, 3)), Values((3, 4))), {"equation": "ij,jk->ik"}),
            Case("implicit output", (Values((2, 3)), Values((3, 4))), {"equation": "ij,jk"}),
            Case("everything summed", (Values((2, 3)),), {"equation": "ij->"}),
            Case(
                "an index only one operand has",
                (Values((2, 3)), Values((4,))),
                {"equation": "ij,k->k"},
            ),
            Case(
                "ellipsis, broadcast",
                (Values((2, 1, 4)), Values((3, 4))),
                {"equation": "...d,...d->..."},
            ),
            Case(
                "three operands",
                (Values((2, 3)), Values((3, 4)), Values((4, 2))),
                {"equation": "ij,jk,kl->il"},
            ),
            Case(
                "one constant operand",
                (Values((2, 3)), Values((3, 4), requires_grad=False)),
                {"equation": "ij,jk->ik"},
            ),
        ),
        _generate_einsum,
        "ops.matmul",
        "torch.einsum / ta.einsum",
    )
)

# ------------------------------------------------------------------- products, sorting
_row(
    "torch.bmm",
    T.bmm,
    np.matmul,
    (Case("(2,3,4) @ (2,4,5)", (Values((2, 3, 4)), Values((2, 4, 5)))),),
    "torch_functions",
)
_row(
    "torch.outer",
    T.outer,
    np.outer,
    (Case("(3,) x (4,)", (Values((3,)), Values((4,)))),),
    "torch_functions",
)


def _np_addmm(c: np.ndarray, a: np.ndarray, b: np.ndarray, beta=1, alpha=1) -> np.ndarray:
    return beta * c + alpha * (a @ b)


_row(
    "torch.addmm",
    T.addmm,
    _np_addmm,
    (
        Case("(4,) + (2,3) @ (3,4)", (Values((4,)), Values((2, 3)), Values((3, 4)))),
        Case(
            "beta, alpha",
            (Values((2, 4)), Values((2, 3)), Values((3, 4))),
            {"beta": 0.5, "alpha": 2.0},
        ),
    ),
    "torch_functions",
)


def _sort_values(x: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    return T.sort(x, dim, descending).values


def _np_sort(x: np.ndarray, dim: int = -1, descending: bool = False) -> np.ndarray:
    out = np.sort(x, axis=dim)
    return np.flip(out, axis=dim) if descending else out


_row(
    "torch.sort",
    _sort_values,
    _np_sort,
    (
        Case("(3,4) last axis", (Values((3, 4), DISTINCT),)),
        Case(
            "(3,4) axis 0, descending", (Values((3, 4), DISTINCT),), {"dim": 0, "descending": True}
        ),
    ),
    "torch_functions",
    "the values, picked at the indices",
)


def _np_logsumexp(x: np.ndarray, dim, keepdim: bool = False) -> np.ndarray:
    peak = x.max(axis=dim, keepdims=True)
    out = np.log(np.exp(x - peak).sum(axis=dim, keepdims=True)) + peak
    return out if keepdim else np.squeeze(out, axis=dim)


_row(
    "F.logsumexp",
    F.logsumexp,
    _np_logsumexp,
    (
        Case("(3,4) dim=1", (Values((3, 4)),), {"dim": 1}),
        Case("(2,3,4) dims (0,2) keepdim", (Values((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}),
    ),
    "functional",
)


# ------------------------------------------------------------------------------ losses
def _np_reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    return {"mean": loss.mean, "sum": loss.sum}.get(reduction, lambda: loss)()


def _np_nll(
    logp: np.ndarray, target: np.ndarray, reduction: str = "mean", axis: int = 1
) -> np.ndarray:
    logp = np.moveaxis(logp, axis, -1)  # (..., C)
    kept = target != -100
    picked = np.take_along_axis(logp, np.where(kept, target, 0)[..., None], -1)[..., 0]
    loss = -picked * kept
    return loss.sum() / kept.sum() if reduction == "mean" else _np_reduce(loss, reduction)


_row(
    "F.nll_loss",
    F.nll_loss,
    _np_nll,
    (
        Case("(4,5) mean, one ignored", (Values((4, 5)),), {"target": np.array([0, 4, -100, 2])}),
        Case(
            "(2,3,5) class axis last, sum",
            (Values((2, 3, 5)),),
            {"target": np.array([[1, 0, 4], [4, 4, 2]]), "reduction": "sum", "axis": -1},
        ),
        Case(
            "(2,5,3) (N,C,d) mean",
            (Values((2, 5, 3)),),
            {"target": np.array([[1, 0, 4], [4, 4, 2]])},
        ),
    ),
    "functional",
    "class axis 1 (axis= another); integer targets",
)


def _np_l1(a: np.ndarray, b: np.ndarray, reduction: str = "mean") -> np.ndarray:
    return _np_reduce(np.abs(a - b), reduction)


def _np_smooth_l1(a: np.ndarray, b: np.ndarray, reduction: str = "mean", beta=1.0):
    d = np.abs(a - b)
    return _np_reduce(np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


_row(
    "F.l1_loss",
    F.l1_loss,
    _np_l1,
    # (against a target of zeros, with inputs off the kink at input == target)
    (Case("(3,4)", (Values((3, 4), AWAY_FROM_ZERO), fixed(np.zeros((3, 4)), False))),),
    "functional",
)
_row(
    "F.smooth_l1_loss",
    F.smooth_l1_loss,
    _np_smooth_l1,
    (
        Case("(3,4)", (Values((3, 4)), Values((3, 4)))),
        Case(
            "(3,4) beta 0.5, sum",
            (Values((3, 4)), Values((3, 4))),
            {"beta": 0.5, "reduction": "sum"},
        ),
    ),
    "functional",
)


def _bce_of_sigmoid(x: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    return F.binary_cross_entropy(x.sigmoid(), target, reduction=reduction)


def _np_bce_of_sigmoid(x: np.ndarray, t: np.ndarray, reduction: str = "mean") -> np.ndarray:
    p = _np_sigmoid(x)
    return _np_reduce(-(t * np.log(p) + (1 - t) * np.log(1 - p)), reduction)


def _np_bce_logits(x: np.ndarray, t: np.ndarray, reduction="mean", pos_weight=1.0):
    soft = np.logaddexp(0, -x)
    return _np_reduce((1 - t) * x + (1 + (pos_weight - 1) * t) * soft, reduction)


_targets = Values((3, 4), requires_grad=False)
_row(
    "F.binary_cross_entropy",
    _bce_of_sigmoid,
    _np_bce_of_sigmoid,
    (Case("sigmoid (3,4)", (Values((3, 4)), _targets)),),
    "functional",
    "of sigmoid(x): probabilities in (0, 1)",
)
_row(
    "F.binary_cross_entropy_with_logits",
    F.binary_cross_entropy_with_logits,
    _np_bce_logits,
    (
        Case("(3,4)", (Values((3, 4)), _targets)),
        Case(
            "(3,4) pos_weight, sum",
            (Values((3, 4)), _targets),
            {"pos_weight": 3.0, "reduction": "sum"},
        ),
    ),
    "functional",
)


# ----------------------------------------------------------------- normalise, pad, lookup
def _np_normalize(x: np.ndarray, p: float = 2.0, dim: int = 1) -> np.ndarray:
    size = np.sum(np.abs(x) ** p, axis=dim, keepdims=True) ** (1 / p)
    return x / np.maximum(size, 1e-12)


def _np_cosine(a: np.ndarray, b: np.ndarray, dim: int = 1, eps: float = 1e-8) -> np.ndarray:
    sizes = np.maximum(np.linalg.norm(a, axis=dim), eps) * np.maximum(
        np.linalg.norm(b, axis=dim), eps
    )
    return (a * b).sum(axis=dim) / sizes


def _np_pad(x: np.ndarray, pad: tuple, value: float = 0.0) -> np.ndarray:
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return np.pad(x, widths, constant_values=value)


def _np_embedding(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[ids]


def _embedding(weight: Tensor, ids: np.ndarray) -> Tensor:
    return F.embedding(ids, weight)


_row(
    "F.normalize",
    F.normalize,
    _np_normalize,
    (
        Case("(3,4) dim 1", (Values((3, 4), AWAY_FROM_ZERO),)),
        Case("(3,4) p=1, dim 0", (Values((3, 4), AWAY_FROM_ZERO),), {"p": 1.0, "dim": 0}),
    ),
    "functional",
)
_row(
    "F.cosine_similarity",
    F.cosine_similarity,
    _np_cosine,
    (
        Case("(3,4) dim 1", (Values((3, 4)), Values((3, 4)))),
        Case("(3,4) with (1,4), dim -1", (Values((3, 4)), Values((1, 4))), {"dim": -1}),
    ),
    "functional",
)
_row(
    "F.pad",
    F.pad,
    _np_pad,
    (
        Case("(2,3) last axis", (Values((2, 3)),), {"pad": (1, 2)}),
        Case("(2,3,4) two axes, value", (Values((2, 3, 4)),), {"pad": (0, 1, 2, 0), "value": -1.5}),
    ),
    "functional",
)
_row(
    "F.embedding",
    _embedding,
    _np_embedding,
    (Case("(5,3) table, ids (2,2)", (Values((5, 3)),), {"ids": np.array([[0, 4], [4, 1]])}),),
    "functional",
    "a repeated id adds up",
)
