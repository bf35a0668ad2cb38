"""Matrix product with NumPy's `@` semantics: 1-D, 2-D, batched, broadcast batch axes."""

from __future__ import annotations

import math

import numpy as np

from ..function import Function
from ..higher_order import graph_inputs


def _check_shapes(a: np.ndarray, b: np.ndarray) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"MatMul: both operands need at least one axis, got shapes {a.shape} @ {b.shape}; "
            "use * to multiply by a scalar"
        )
    inner_a = a.shape[-1]
    inner_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if inner_a != inner_b:
        raise ValueError(
            f"MatMul: cannot multiply shapes {a.shape} @ {b.shape}: the last axis of the left "
            f"operand ({inner_a}) must equal the "
            f"{'second-to-last' if b.ndim > 1 else 'only'} axis of the right ({inner_b}). "
            "Did you mean to transpose one of them (.T or .swapaxes(-1, -2))?"
        )


def _rows(a: np.ndarray) -> np.ndarray:
    """(..., K) -> (rows, K). The row count is written out only when K is 0: NumPy cannot
    infer -1 then."""
    k = a.shape[-1]
    return a.reshape(-1, k) if k else a.reshape(math.prod(a.shape[:-1]), 0)


def _fold(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b; a stack of rows times one matrix runs as a single 2-D GEMM."""
    if a.ndim > 2 and b.ndim == 2 and a.size > a.shape[-1] * a.shape[-2]:  # (not one matrix)
        # (into an array of the result's shape, not a view of one: a view would be copied)
        out = np.empty((*a.shape[:-1], b.shape[-1]), np.result_type(a, b))
        np.matmul(_rows(a), b, out=_rows(out))
        return out
    return a @ b


class MatMul(Function):
    """out = a @ b;  da = dout @ b^T,  db = a^T @ dout  (over the last two axes)"""

    @staticmethod
    def forward(ctx, a, b):
        try:
            out = _fold(a, b)
        except ValueError:
            _check_shapes(a, b)  # raises the readable error, else the batch axes are at fault
            raise ValueError(
                f"MatMul: the batch axes of {a.shape} @ {b.shape} (all but the last two) do "
                "not broadcast; they must be equal or 1"
            ) from None
        needs = ctx.needs_input_grad  # (each operand is saved for the other's gradient)
        ctx.save_for_backward(
            a if needs[1] else np.broadcast_to(a.dtype.type(0), a.shape),
            b if needs[0] else np.broadcast_to(b.dtype.type(0), b.shape),
        )  # (a stand-in of the right shape, no memory, for the operand that is not needed)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        if a.ndim == 1 or b.ndim == 1:
            return _vector_grads(ctx.needs_input_grad, a, b, grad_out)
        return _matrix_grads(ctx.needs_input_grad, a, b, grad_out)

    @staticmethod
    def backward_graph(ctx, grad_out):
        a, b = graph_inputs(ctx, *ctx.saved_tensors)
        a2 = a.unsqueeze(0) if a.ndim == 1 else a  # (..., M, K)
        b2 = b.unsqueeze(-1) if b.ndim == 1 else b  # (..., K, N)
        g = grad_out.unsqueeze(-2 if b.ndim > 1 else 0) if a.ndim == 1 else grad_out
        g = g.unsqueeze(-1) if b.ndim == 1 else g  # (..., M, N)
        grad_a = g @ b2.mT if ctx.needs_input_grad[0] else None  # (..., M, K)
        grad_b = a2.mT @ g if ctx.needs_input_grad[1] else None  # (..., K, N)
        if grad_a is not None and a.ndim == 1:
            grad_a = grad_a.squeeze(-2)  # (..., K)
        if grad_b is not None and b.ndim == 1:
            grad_b = grad_b.squeeze(-1)  # (..., K)
        return grad_a, grad_b


def _matrix_grads(needs: tuple, a: np.ndarray, b: np.ndarray, grad_out: np.ndarray) -> tuple:
    """(da, db) for a @ b of operands with two axes or more (None where not needed)."""
    grad_a = _fold(grad_out, b.swapaxes(-1, -2)) if needs[0] else None  # (..., M, K)
    if not needs[1]:
        return grad_a, None
    if b.ndim == 2 and a.ndim > 2:  # one weight shared by every row: one GEMM over all rows
        return grad_a, _rows(a).T @ _rows(grad_out)  # (K, N)
    return grad_a, a.swapaxes(-1, -2) @ grad_out  # (..., K, N)


def _vector_grads(needs: tuple, a: np.ndarray, b: np.ndarray, grad_out: np.ndarray) -> tuple:
    """(da, db) when an operand is 1-D: it acts as a row (left) or a column (right) whose extra
    axis the output dropped; that axis is put back so the matrix rules apply, then dropped."""
    g = grad_out
    if a.ndim == 1:
        g = np.expand_dims(g, -2 if b.ndim > 1 else 0)  # (..., 1, N)
    if b.ndim == 1:
        g = np.expand_dims(g, -1)  # (..., M, 1)
    a2 = a[None, :] if a.ndim == 1 else a  # (..., M, K)
    b2 = b[:, None] if b.ndim == 1 else b  # (..., K, N)
    grad_a, grad_b = _matrix_grads(needs, a2, b2, g)
    if grad_a is not None and a.ndim == 1:
        grad_a = grad_a[..., 0, :]  # (..., K)
    if grad_b is not None and b.ndim == 1:
        grad_b = grad_b[..., 0]  # (..., K)
    return grad_a, grad_b


class Einsum(Function):
    """out = einsum("a,b,...->out", *operands);  d(operand i) = einsum of dout with the other
    operands, onto operand i's indices (an index only operand i has was summed: dout spreads
    back along it)"""

    saved_as = "inputs"  # (backward_graph: its backward runs on Tensors, see higher_order.py)

    @staticmethod
    def forward(ctx, *operands, subscripts, result):
        # `subscripts`: one string of letters per operand, `result`: the output's letters
        # (ellipses already written out as letters, by torch_functions.einsum)
        ctx.subscripts, ctx.result = subscripts, result
        ctx.save_for_backward(*operands)
        return np.einsum(f"{','.join(subscripts)}->{result}", *operands)

    @staticmethod
    def backward(ctx, grad_out):
        operands = ctx.saved_tensors
        grads = []
        for i, letters in enumerate(ctx.subscripts):
            if not ctx.needs_input_grad[i]:
                grads.append(None)
                continue
            others = [j for j in range(len(operands)) if j != i]
            seen = set(ctx.result).union(*(ctx.subscripts[j] for j in others))
            kept = "".join(c for c in letters if c in seen)  # in operand i's order
            spec = ",".join([ctx.result] + [ctx.subscripts[j] for j in others]) + "->" + kept
            grad = np.einsum(spec, grad_out, *[operands[j] for j in others])
            # (the letters only operand i had become axes of the operand's length)
            shape = [
                grad.shape[kept.index(c)] if c in seen else n
                for c, n in zip(letters, operands[i].shape)
            ]
            missing = [k for k, c in enumerate(letters) if c not in seen]
            grads.append(np.broadcast_to(np.expand_dims(grad, missing), shape))
        return tuple(grads)
