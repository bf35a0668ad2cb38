"""`torch.linalg` as far as attention code uses it: the norms (`vector_norm`, `matrix_norm` in
its Frobenius and max/min-sum forms, `norm`), each the Tensor's `norm` or reductions, so their
gradients are those ops' (twice differentiable). The factorisations and solvers (svd, inv,
solve, eigh, qr, cholesky, ...) are not here: asking for one says so, and how to get its values
without a gradient (NumPy's `np.linalg` on `t.numpy()`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import DTypeError
from .functional import _tensor
from .tensor import Tensor

__all__ = ["matrix_norm", "norm", "vector_norm"]


def vector_norm(
    x: Any, ord: float = 2, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The `ord`-norm of the vectors along `dim` (every element when None): a number > 0, inf,
    -inf or 0, as PyTorch's."""
    x = _float_input(x, "vector_norm", dtype)
    return x.norm(ord, dim=dim, keepdim=keepdim)


def matrix_norm(
    A: Any, ord: Any = "fro", dim: tuple = (-2, -1), keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """The norm of the matrices in the dims `dim`: "fro" (Frobenius), 1 / -1 (the largest /
    smallest column sum of |A|) or inf / -inf (row sums). "nuc", 2 and -2 need singular values,
    which this package does not compute."""
    A = _float_input(A, "matrix_norm", dtype)
    if A.ndim < 2:
        raise ValueError(f"linalg.matrix_norm: A must have at least 2 dims, got shape {A.shape}")
    rows, cols = dim
    if ord == "fro":
        return A.norm(2, dim=dim, keepdim=keepdim)
    if ord in (1, -1, np.inf, -np.inf):
        summed, over = (rows, cols) if ord in (1, -1) else (cols, rows)
        sums = A.abs().sum(dim=summed, keepdim=True)
        pick = sums.amax if ord > 0 else sums.amin
        out = pick(dim=over, keepdim=True)
        return out if keepdim else out.squeeze(tuple(sorted({rows % A.ndim, cols % A.ndim})))
    raise NotImplementedError(
        f"linalg.matrix_norm(ord={ord!r}): needs singular values, which tinygrad_attn does not "
        "compute; use 'fro', 1, -1, inf or -inf, or np.linalg.norm(A.numpy(), ...) for the "
        "value without a gradient"
    )


def norm(
    A: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None
) -> Tensor:
    """PyTorch's `linalg.norm`: a vector norm for one dim (or all, when `ord` is None), a matrix
    norm for two dims or a 2-D input with `ord` given."""
    A = _float_input(A, "norm", dtype)
    two_dims = (dim is None and ord is not None and A.ndim == 2) or (
        isinstance(dim, (tuple, list)) and len(dim) == 2
    )
    if two_dims:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim or (-2, -1)), keepdim)
    if ord is not None and dim is None and A.ndim != 1:
        raise ValueError(
            f"linalg.norm: ord={ord!r} needs a 1-D or 2-D input or dim, got shape {A.shape}"
        )
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim)


def _float_input(x: Any, fn: str, dtype: Any) -> Tensor:
    x = _tensor(x, f"linalg.{fn}")
    if dtype is not None:
        x = x.to(dtype)
    if x.dtype.kind != "f":
        raise DTypeError(
            f"linalg.{fn}: expected a floating point input, got {x.dtype}; convert it first "
            "(x.float())"
        )
    return x


_NOT_HERE = set(
    "svd svdvals inv inv_ex pinv det slogdet solve solve_ex lstsq eig eigh eigvals eigvalsh qr "
    "cholesky cholesky_ex lu lu_factor matrix_power matrix_rank matrix_exp cond cross "
    "multi_dot householder_product tensorinv tensorsolve vander vecdot diagonal".split()
)


def __getattr__(name: str) -> Any:
    if name in _NOT_HERE:
        raise AttributeError(
            f"torch.linalg.{name} is not in tinygrad_attn (it has the ops attention needs, and "
            f"the norms). For its values without a gradient use np.linalg on t.numpy()."
        )
    raise AttributeError(f"module 'tinygrad_attn.linalg' has no attribute {name!r}")
