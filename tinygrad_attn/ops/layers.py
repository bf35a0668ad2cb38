"""Fused layer ops: Linear, LayerNorm, GELU and cross-entropy, each one node.

Each of these is one step of the maths that the primitive ops would spell as several nodes
(`Linear` as MatMul + Transpose + Add, LayerNorm as a dozen): one node here, with the gradient
derived by hand and checked in float64 like every other op. `functional/` keeps the composed
forms (`linear_composed`, `layer_norm_composed`, `gelu_composed`, `cross_entropy_composed`) for
reading and drawing.

Argument checking with user-facing messages happens in `functional/`; these ops only guard
what would otherwise fail deep inside NumPy. Arrays an op computes and saves are made read-only
here (rule 1 of function.py's note), so saving them costs no lock.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..function import Function
from ..higher_order import composite_backward, graph_inputs
from ..state import is_grad_enabled
from ._erf import ERFC_POLY, erfc_into
from ._util import BLOCK, blockwise, frozen, row_sums
from .math_functions import _erf

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_INV_SQRT_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_CUBIC = 0.044715


def _column_sums(a: np.ndarray) -> np.ndarray:
    """a.sum(axis=0) of a 2-D array, as a vector-matrix product (see `_util.row_sums`); of a
    Tensor (in backward_graph), a Sum node."""
    if not isinstance(a, np.ndarray):
        return a.sum(0)
    return np.ones(a.shape[0], dtype=a.dtype) @ a  # (D,)


def _square(x: np.ndarray) -> np.ndarray:
    """x * x as a fresh array, also for a 0-d x (where `*` gives a NumPy scalar)."""
    return np.multiply(x, x, out=np.empty_like(x))


class Linear(Function):
    """out = x @ W^T + b;  dx = dout @ W,  dW = dout^T @ x,  db = sum of dout over rows"""

    saved_as = (0, 1)  # (backward_graph: see higher_order.py)

    @staticmethod
    def forward(ctx, x, weight, *bias):
        out_features, in_features = weight.shape
        if x.ndim == 0 or x.shape[-1] != in_features:
            raise ValueError(
                f"Linear: input of shape {x.shape} does not fit weight {weight.shape}: its last "
                f"axis must be in_features={in_features}"
            )
        rows = x.reshape(-1, in_features)  # (N, in), N = all leading axes folded together
        out = rows @ weight.T  # (N, out): one GEMM, whatever the batch axes
        if bias:
            out += bias[0]  # (N, out)
        ctx.save_for_backward(x, weight)  # the bias is not needed: db only sums dout
        return out.reshape(*x.shape[:-1], out_features)  # (..., out)

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        grad_rows = grad_out.reshape(-1, weight.shape[0])  # (N, out)
        grad_x = grad_weight = grad_bias = None
        if needs[0]:
            grad_x = (grad_rows @ weight).reshape(x.shape)  # (..., in)
        if needs[1]:
            grad_weight = grad_rows.T @ x.reshape(-1, weight.shape[1])  # (out, in)
        if len(needs) == 2:
            return grad_x, grad_weight
        if needs[2]:
            grad_bias = _column_sums(grad_rows)  # (out,)
        return grad_x, grad_weight, grad_bias


class LayerNorm(Function):
    """xhat = (x - mean) / sqrt(var + eps) over the last `dims` axes, out = xhat * w + b;
    dw = sum(dout * xhat),  db = sum(dout),  g = dout * w,
    dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps)"""

    @staticmethod
    def forward(ctx, x, *affine, dims, eps, has_weight):
        features = x.shape[x.ndim - dims :]
        rows = x.reshape(-1, math.prod(features))  # (N, D): the normalised axes flattened
        if rows.dtype.kind != "f":
            rows = rows.astype(np.float64)
        width = rows.shape[1]
        centred = rows - row_sums(rows, 1 / width)[:, None]  # (N, D)
        var = np.einsum("nd,nd->n", centred, centred)[:, None]  # (N, 1), times D
        var /= width
        var += eps
        inv_std = np.sqrt(var, out=var)  # (N, 1)
        np.divide(1, inv_std, out=inv_std)
        centred *= inv_std
        x_hat = frozen(centred)  # (N, D)
        weight = affine[0].reshape(-1) if has_weight else None  # (D,)
        bias = affine[-1].reshape(-1) if len(affine) > has_weight else None  # (D,)
        if weight is not None:
            out = x_hat * weight  # (N, D)
            if bias is not None:
                out += bias
        else:
            out = x_hat + bias if bias is not None else x_hat.copy()  # (N, D)
        ctx.has_weight, ctx.features, ctx.eps, ctx.shape = has_weight, features, eps, x.shape
        ctx.save_for_backward(x_hat, frozen(inv_std), *affine[:has_weight])
        return out.reshape(x.shape)  # (..., *features)

    @staticmethod
    def backward(ctx, grad_out):
        x_hat, inv_std, *weight = ctx.saved_tensors
        needs = ctx.needs_input_grad
        has_bias = len(needs) > 1 + ctx.has_weight
        grad_rows = grad_out.reshape(x_hat.shape)  # (N, D)
        want = (needs[0], bool(weight) and needs[1], has_bias and needs[-1])
        w = weight[0].reshape(-1) if weight else None  # (D,)
        grad_x, grad_w, grad_b = _layer_norm_grads(grad_rows, x_hat, inv_std, w, want)
        grads = [None] * len(needs)
        if grad_x is not None:
            grads[0] = grad_x.reshape(grad_out.shape)  # (..., *features)
        if grad_w is not None:
            grads[1] = grad_w.reshape(ctx.features)  # (*features)
        if grad_b is not None:
            grads[-1] = grad_b.reshape(ctx.features)  # (*features)
        return tuple(grads)

    @staticmethod
    def backward_graph(ctx, grad_out):
        # The composed layer norm, differentiated as a graph, at x - mean(x) (= x_hat * std,
        # what was saved): a layer norm does not change when a row is shifted, nor does any
        # of its derivatives. The bias's value does not reach any gradient (zeros stand in).
        x_hat, inv_std, *weight = ctx.saved_tensors
        centred = (x_hat / inv_std).reshape(ctx.shape)  # (..., *features)
        has_bias = len(ctx.needs_input_grad) > 1 + ctx.has_weight
        bias = (np.zeros(ctx.features, x_hat.dtype),) if has_bias else ()

        def layer_norm(x, *affine):
            from ..functional import layer_norm_composed

            w = affine[0] if ctx.has_weight else None
            b = affine[-1] if has_bias else None
            return layer_norm_composed(x, ctx.features, w, b, ctx.eps)

        return composite_backward(ctx, grad_out, layer_norm, (centred, *weight, *bias))


def _layer_norm_grads(
    grad_rows: np.ndarray, x_hat: np.ndarray, inv_std: np.ndarray, weight: Any, want: tuple
) -> tuple:
    """(dx, dw, db), each None unless `want`ed: dw = sum(dout * xhat), db = sum(dout) over the
    rows, dx = (g - mean(g) - xhat * mean(g * xhat)) * inv_std with g = dout * w (the means
    over each row's D features). In blocks of rows that stay in cache (_util.BLOCK), in place:
    a fresh (N, D) array costs a pass of its own."""
    rows, width = x_hat.shape
    dtype = np.result_type(grad_rows, x_hat, *(() if weight is None else (weight,)))
    grad_x = np.empty((rows, width), dtype) if want[0] else None  # (N, D)
    grad_w = np.zeros(width, dtype) if want[1] else None  # (D,)
    grad_b = np.zeros(width, dtype) if want[2] else None  # (D,)
    step = max(1, BLOCK // max(width, 1))
    scratch = np.empty((min(step, rows), width), dtype)
    for start in range(0, rows, step):
        d, xh = grad_rows[start : start + step], x_hat[start : start + step]
        tmp = scratch[: len(d)]
        if grad_w is not None:
            grad_w += _column_sums(np.multiply(d, xh, out=tmp))
        if grad_b is not None:
            grad_b += _column_sums(d)
        if grad_x is None:
            continue
        g = grad_x[start : start + step]
        if weight is None:
            g[...] = d
        else:
            np.multiply(d, weight, out=g)
        projection = np.einsum("nd,nd->n", g, xh)[:, None]  # (n, 1), times D
        projection /= width
        g -= row_sums(g, 1 / width)[:, None]
        g -= np.multiply(xh, projection, out=tmp)
        g *= inv_std[start : start + step]
    return grad_x, grad_w, grad_b


class GELU(Function):
    """exact: out = x * Phi(x),  dx = Phi(x) + x * phi(x)  (Phi, phi: the normal cdf and pdf);
    tanh: out = x (1 + t) / 2 with t = tanh(c (x + 0.044715 x^3)), c = sqrt(2/pi),
    dx = (1 + t) / 2 + x (1 - t^2) c (1 + 3 * 0.044715 x^2) / 2"""

    @staticmethod
    def forward(ctx, x, approximate="none"):
        # The slope dout/dx is computed here, from the pieces of the forward, unless under
        # no_grad: backward is then one multiply, and the slope is the only array saved.
        if approximate == "tanh":  # in cache-sized blocks, each pass in place (_util.blockwise)
            if is_grad_enabled():
                out, slope = blockwise(_gelu_tanh_and_slope, x, outputs=2, scratch=2)
                ctx.save_for_backward(frozen(slope), x)
            else:
                (out,) = blockwise(_gelu_tanh, x, outputs=1, scratch=1)
        elif approximate == "none" and x.dtype == np.float32:  # (float64: math.erf, below)
            out, slope = blockwise(_gelu_erf_float32, x, outputs=2, scratch=3)
            if is_grad_enabled():
                ctx.save_for_backward(frozen(slope), x)
        elif approximate == "none":
            square = _square(x)  # (x.shape)
            # NumPy has no erf; math.erf per element is exact, which gradcheck needs.
            cdf = np.asarray(_erf(x * _INV_SQRT_2), dtype=x.dtype)
            cdf += 1
            cdf *= 0.5  # Phi(x)
            out = x * cdf
            if is_grad_enabled():
                slope = square
                slope *= -0.5
                np.exp(slope, out=slope)
                slope *= _INV_SQRT_2PI
                slope *= x  # x * phi(x)
                slope += cdf
                ctx.save_for_backward(frozen(slope), x)
        else:
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        ctx.approximate = approximate
        return out

    @staticmethod
    def backward(ctx, grad_out):
        slope, _ = ctx.saved_tensors  # dout/dx, from forward (and x, for backward_graph)
        return (grad_out * slope,)

    @staticmethod
    def backward_graph(ctx, grad_out):
        _, x = ctx.saved_tensors  # the composed GELU, differentiated as a graph

        def gelu(x):
            from ..functional import gelu_composed

            return gelu_composed(x, ctx.approximate)

        return composite_backward(ctx, grad_out, gelu, (x,))


_HALF_ERFC_POLY = [c / 2 for c in ERFC_POLY]  # (erfc / 2: the normal cdf's tail)


def _gelu_erf_float32(
    x: np.ndarray, out: np.ndarray, slope: np.ndarray, t: np.ndarray, e: np.ndarray, p: np.ndarray
) -> None:
    """out = x Phi(x), slope = Phi(x) + x phi(x) on one block of float32 values, Phi(x) =
    erfc(-x / sqrt 2) / 2 from ops/_erf.py's polynomial, so the tail x < 0 keeps its relative
    accuracy: out within 2e-6 (relative) of math.erf's answer for |x| < 4 and 3e-5 beyond, the
    slope within 5e-7 (tests/test_layers.py compares, on the same float32 inputs)."""
    np.abs(x, out=e)
    e *= _INV_SQRT_2  # a = |x| / sqrt 2
    erfc_into(p, e, t, _HALF_ERFC_POLY)  # erfc(a) / 2 = Phi(-|x|); e = exp(-x^2 / 2), phi's too
    # Phi(x) = p + [x >= 0] (1 - 2p) with p = Phi(-|x|): exactly p where x < 0. Arithmetic,
    # not a copy where x < 0, whose branch on each element's sign costs more than these passes.
    np.greater_equal(x, 0, out=t, casting="unsafe")  # [x >= 0], as 0.0 or 1.0
    np.multiply(p, -2, out=out)
    out += 1
    out *= t
    out += p  # Phi(x)
    e *= _INV_SQRT_2PI
    e *= x  # x phi(x)
    np.add(out, e, out=slope)
    out *= x


def _gelu_tanh(x: np.ndarray, out: np.ndarray, z: np.ndarray) -> None:
    """out = x h, h = (1 + t) / 2, t = tanh(c (x + 0.044715 x^3)) (one block, in place)."""
    np.multiply(x, x, out=z)
    z *= _SQRT_2_OVER_PI * _GELU_CUBIC
    z += _SQRT_2_OVER_PI
    z *= x  # c (x + 0.044715 x^3)
    np.tanh(z, out=z)  # t
    z += 1
    z *= 0.5  # h
    np.multiply(z, x, out=out)


def _gelu_tanh_and_slope(
    x: np.ndarray, out: np.ndarray, slope: np.ndarray, a: np.ndarray, z: np.ndarray
) -> None:
    """The same out, and its slope dout/dx = h (1 + a (1 - t)), a = c x (1 + 3 * 0.044715 x^2):
    fifteen passes over one block, no temporaries."""
    np.multiply(x, x, out=a)  # x^2
    np.multiply(a, _SQRT_2_OVER_PI * _GELU_CUBIC, out=z)
    z += _SQRT_2_OVER_PI
    z *= x  # c (x + 0.044715 x^3)
    np.tanh(z, out=z)  # t
    a *= 3 * _SQRT_2_OVER_PI * _GELU_CUBIC
    a += _SQRT_2_OVER_PI
    a *= x  # a
    np.subtract(1, z, out=slope)  # 1 - t
    slope *= a
    slope += 1  # 1 + a (1 - t)
    z += 1
    z *= 0.5  # h
    slope *= z
    np.multiply(z, x, out=out)


class CrossEntropy(Function):
    """loss_i = w_i (1 - s) nll_i + (s / C) sum_c w_c (-logp[i, c]), with logp = log_softmax(logits)
    over the last axis, nll_i = -logp[i, t_i], w_c the class weights (1 without), w_i = w_(t_i), and
    0 where t_i == ignore_index; then summed, divided by the summed w_i of the kept rows
    ("mean"), or kept;  dlogits_i = r_i ((1 - s) w_i (p_i - onehot(t_i)) + (s / C)(W p_i - w)),
    with p = softmax(logits), W = sum_c w_c and r_i that reduction's weight of row i times dout"""

    @staticmethod
    def forward(
        ctx,
        logits,
        *,
        target,
        weight=None,
        ignore_index=-100,
        label_smoothing=0.0,
        reduction="mean",
    ):
        classes = logits.shape[-1]
        rows = logits.reshape(-1, classes)  # (N, C)
        # A copy: a label buffer refilled before backward must not change the gradient.
        labels = np.array(target, dtype=np.intp).reshape(-1)  # (N,)
        kept = labels != ignore_index  # (N,)
        picked_labels = np.where(kept, labels, 0)  # (N,), any valid index where ignored
        shifted = rows - rows.max(axis=1, keepdims=True)  # (N, C), for a stable exp
        total = row_sums(np.exp(shifted))[:, None]  # (N, 1)
        log_total = np.log(total)  # (N, 1)
        picked = shifted[np.arange(labels.size), picked_labels] - log_total[:, 0]  # (N,)
        row_weights = kept.astype(logits.dtype)  # (N,): w_i, 0 where ignored
        if weight is not None:
            weight = frozen(np.array(weight, dtype=logits.dtype))  # (C,), a copy of its own
            row_weights *= weight[picked_labels]
        loss = -picked
        loss *= row_weights
        if label_smoothing:
            if weight is None:  # sum_c -logp[i, c]
                smooth = classes * log_total[:, 0] - row_sums(shifted)  # (N,)
            else:  # sum_c -w_c logp[i, c]
                smooth = weight.sum() * log_total[:, 0] - shifted @ weight  # (N,)
            loss *= 1 - label_smoothing
            loss += (label_smoothing / classes) * smooth * kept
        shifted -= log_total  # (N, C): now log_softmax(logits), what backward keeps (as PyTorch)
        ctx.denominator = float(row_weights.sum())
        ctx.logits_shape = logits.shape
        ctx.label_smoothing = label_smoothing
        ctx.reduction = reduction
        saved = (frozen(shifted), frozen(picked_labels), frozen(kept), frozen(row_weights))
        ctx.save_for_backward(*saved, *(() if weight is None else (weight,)))
        if reduction == "none":
            return loss.reshape(np.shape(target))  # target's shape
        out = loss.sum(dtype=logits.dtype)
        if reduction == "mean":
            nothing = ctx.denominator == 0
            out = logits.dtype.type("nan") if nothing else out / logits.dtype.type(ctx.denominator)
        return np.asarray(out, dtype=logits.dtype)  # ()

    @staticmethod
    def backward(ctx, grad_out):
        log_probs, labels, kept, row_weights, *weight = ctx.saved_tensors
        s = ctx.label_smoothing
        classes = log_probs.shape[1]
        if ctx.reduction == "none":
            scale = grad_out.reshape(-1)  # (N,)
        elif ctx.reduction == "sum":
            scale = grad_out
        else:
            # Nothing counted: the mean is 0/0 = nan, but no row moves it (PyTorch: gradient 0).
            scale = grad_out / (ctx.denominator or 1.0)
        picked = (1 - s) * row_weights * scale  # (N,): the one-hot term's factor per row
        if s:  # (1 - s) w_i (p - onehot) + (s / C)(W p - w), row by row, times r_i
            smooth = (s / classes) * kept * scale  # (N,)
            total_weight = classes if not weight else weight[0].sum()
            grad_rows = np.exp(log_probs)  # (N, C): softmax(logits)
            grad_rows *= (picked + smooth * total_weight)[:, None]
            grad_rows -= smooth[:, None] * (weight[0] if weight else 1)
        else:
            grad_rows = np.exp(log_probs)  # (N, C): softmax(logits)
            grad_rows *= np.reshape(picked, (-1, 1))
        grad_rows[np.arange(labels.size), labels] -= picked
        return (grad_rows.reshape(ctx.logits_shape),)

    @staticmethod
    def backward_graph(ctx, grad_out):
        # The same formula as recorded ops. The log-probabilities stand for the logits: they
        # differ by a shift per row, which no softmax (nor any of its derivatives) sees.
        log_probs, labels, kept, row_weights, *weight = ctx.saved_tensors
        (logits,) = graph_inputs(ctx, log_probs.reshape(ctx.logits_shape))
        rows, classes = log_probs.shape
        probs = logits.reshape(rows, classes).softmax(-1)  # (N, C)
        if ctx.reduction == "none":
            scale = grad_out.reshape(-1)  # (N,)
        else:
            scale = grad_out / (ctx.denominator or 1.0) if ctx.reduction == "mean" else grad_out
        s = ctx.label_smoothing
        picked = (1 - s) * row_weights * scale  # (N,)
        one_hot = np.zeros((rows, classes), log_probs.dtype)
        one_hot[np.arange(rows), labels] = 1
        factor = picked
        if s:
            smooth = (s / classes) * kept * scale  # (N,)
            factor = picked + smooth * (weight[0].sum() if weight else classes)
        grad_rows = probs * factor.reshape(-1, 1) - one_hot * picked.reshape(-1, 1)
        if s:
            grad_rows = grad_rows - smooth.reshape(-1, 1) * (weight[0] if weight else 1.0)
        return (grad_rows.reshape(ctx.logits_shape),)
