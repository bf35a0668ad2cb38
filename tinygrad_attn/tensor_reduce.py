"""The reductions of Tensor in PyTorch's meanings: `max`/`min` (a value, or `(values,
indices)` along a dim), `var`/`std` (correction 1), `argmax`, `topk`, `gather`, `prod`,
`cumsum`, `logsumexp`, `norm`.

`Tensor` inherits `ReduceMethods`. NumPy's meanings of the same names (`np.max(t, axis=0)`,
`np.std(t)`) go through the NumPy protocol (numpy_protocol.py), which calls the ops directly.
This module must not hold derivative code (that lives in `ops/`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import ops
from .tensor_methods import TensorMethods, resolve_axis


class ValuesIndices(NamedTuple):
    """What `max(dim)`, `min(dim)` and `topk` return, as PyTorch: `.values`, `.indices`."""

    values: Any
    indices: Any


def resolve_ddof(fn: str, ddof: Any, dim: Any, torch_style: dict) -> int:
    """The ddof of `var`/`std`: NumPy's default 0, or PyTorch's default correction of 1 when
    called PyTorch-style (`dim=`, `unbiased=`, `correction=`)."""
    unknown = set(torch_style) - {"unbiased", "correction"}
    if unknown:
        raise TypeError(f"{fn}() got unexpected keyword argument(s) {sorted(unknown)}")
    unbiased, correction = torch_style.get("unbiased"), torch_style.get("correction")
    if correction is not None:
        return correction
    if unbiased is not None:
        return int(bool(unbiased))
    if ddof is not None:
        return ddof
    return 1 if dim is not None else 0


class ReduceMethods:
    """The PyTorch-style reductions of `Tensor`."""

    __slots__ = ()

    def any(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Any:
        """Whether any element (along `dim`) is non-zero: a bool tensor, outside the graph."""
        axis, keepdim = resolve_axis("any", axis, None, dim, keepdim)
        return type(self)._make(np.asarray(np.any(self._data, axis=axis, keepdims=keepdim)))

    def all(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Any:
        """Whether every element (along `dim`) is non-zero: a bool tensor, outside the graph."""
        axis, keepdim = resolve_axis("all", axis, None, dim, keepdim)
        return type(self)._make(np.asarray(np.all(self._data, axis=axis, keepdims=keepdim)))

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """Largest value. `max()` / `max(axis=...)` reduce (NumPy; where elements tie, the
        gradient is split evenly among them, as torch.amax does); `max(d)` / `max(dim=d)` give
        PyTorch's `(values, indices)`, the gradient going to the element the index names (the
        first of tied maxima); `max(other_tensor)` is `maximum`."""
        return _extreme(self, "max", args, kwargs)

    def var(self, axis=None, keepdims=None, ddof=None, *, dim=None, keepdim=None, **torch_style):
        """Variance, dividing by N - ddof: ddof=0 NumPy-style; called PyTorch-style (`dim=`,
        `unbiased=`, `correction=`), PyTorch's default correction of 1."""
        ddof = resolve_ddof("var", ddof, dim, torch_style)
        axis, keepdims = resolve_axis("var", axis, keepdims, dim, keepdim)
        return ops.Var.apply(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """As `max`: `min()` / `min(axis=...)` reduce (NumPy); `min(d)` / `min(dim=d)` give
        `(values, indices)` (PyTorch); `min(other_tensor)` is `minimum`."""
        return _extreme(self, "min", args, kwargs)

    def amax(self, dim: Any = None, keepdim: bool = False) -> Any:
        return self.max(axis=dim, keepdims=keepdim)

    def amin(self, dim: Any = None, keepdim: bool = False) -> Any:
        return ops.Min.apply(self, axis=dim, keepdims=keepdim)

    def argmax(
        self, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None
    ) -> Any:
        """Index of the largest value (no gradient), as an int64 tensor."""
        return _arg(self, np.argmax, resolve_axis("argmax", axis, keepdims, dim, keepdim))

    def argmin(
        self, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims: Any = None
    ) -> Any:
        """Index of the smallest value (no gradient), as an int64 tensor."""
        return _arg(self, np.argmin, resolve_axis("argmin", axis, keepdims, dim, keepdim))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """The k largest (or smallest) values along `dim` and their indices, as PyTorch:
        `values` is in the graph (gradient to the picked elements), `indices` is int64."""
        length = self._data.shape[dim]
        if not 0 <= k <= length:
            raise ValueError(f"topk({k}): k must be in [0, {length}] for dim {dim} of {self.shape}")
        order = np.argsort(-self._data if largest else self._data, axis=dim, kind="stable")
        indices = np.take(order, np.arange(k), axis=dim)
        return ValuesIndices(self.gather(dim, indices), type(self)._make(indices))

    def gather(self, dim: int, index: Any) -> Any:
        """out[i][j] = self[index[i][j]][j] along `dim` (PyTorch's gather, NumPy's
        take_along_axis); repeated indices add up their gradients."""
        index = np.asarray(index._data if isinstance(index, TensorMethods) else index)
        axis = dim % self._data.ndim
        grid = list(np.ogrid[tuple(slice(n) for n in index.shape)])
        grid[axis] = index
        return self[tuple(grid)]

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        """log(sum(exp(x))) over `dim`, without overflow (F.logsumexp); gradient: softmax."""
        from .functional import logsumexp  # (it imports this module: read when called)

        return logsumexp(self, dim, keepdim)

    def prod(self, dim: Any = None, keepdim: Any = None, *, axis: Any = None, keepdims=None):
        """Product over axes; the gradient is the product of the other elements (exact at
        zeros too)."""

        axis, keepdims = resolve_axis("prod", axis, keepdims, dim, keepdim)
        return ops.Prod.apply(self, axis=axis, keepdims=keepdims)

    def cumsum(self, dim: Any = None, *, axis: Any = None) -> Any:
        """Running sum along one axis (flattened first when no axis is given, as NumPy)."""

        axis, _ = resolve_axis("cumsum", axis, None, dim)
        if axis is None:
            return ops.Cumsum.apply(self.reshape(-1), axis=0)
        return ops.Cumsum.apply(self, axis=axis)

    def std(self, axis=None, keepdims=None, ddof=None, *, dim=None, keepdim=None, **torch_style):
        """sqrt(var): ddof=0 NumPy-style, PyTorch's correction of 1 when called PyTorch-style
        (`dim=`, `unbiased=`, `correction=`), as `var`."""
        return self.var(axis, keepdims, ddof, dim=dim, keepdim=keepdim, **torch_style).sqrt()

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
        """The vector p-norm over `dim` (all by default), as torch.norm: p = 2 or "fro", any
        p > 0, inf / -inf (the largest / smallest |x|) or 0 (the count of non-zeros, gradient
        0). At the zero vector the gradient is 0, as in PyTorch."""
        if p == np.inf or p == -np.inf:
            return self.abs().amax(dim, keepdim) if p > 0 else self.abs().amin(dim, keepdim)
        if p == 0:
            count = (self != 0).astype(self.dtype).sum(dim=dim, keepdim=keepdim)
            return (self * 0).sum(dim=dim, keepdim=keepdim) + count
        if isinstance(p, str) and p != "fro":
            raise ValueError(f"norm: p={p!r} is not a vector norm; use 2 ('fro'), a number or inf")
        return ops.Norm.apply(self, p=2 if p == "fro" else p, axis=dim, keepdims=bool(keepdim))


def _extreme(tensor: Any, which: str, args: tuple, kwargs: dict) -> Any:
    """The dispatch of `max`/`min` between NumPy's reduction and PyTorch's forms."""
    op = ops.Max if which == "max" else ops.Min
    if args and isinstance(args[0], TensorMethods) or "other" in kwargs:
        other = args[0] if args else kwargs["other"]
        return tensor.maximum(other) if which == "max" else tensor.minimum(other)
    if "dim" in kwargs or (args and not isinstance(args[0], (tuple, list))):
        dim = kwargs.pop("dim", args[0] if args else None)
        keepdim = kwargs.pop("keepdim", args[1] if len(args) > 1 else False)
        if kwargs:
            raise TypeError(f"{which}(dim, keepdim): unexpected arguments {sorted(kwargs)}")
        arg = np.argmax if which == "max" else np.argmin
        if dim is None:  # (not a PyTorch form: the whole tensor, ties split as by max())
            values = op.apply(tensor, axis=None, keepdims=bool(keepdim))
            return ValuesIndices(values, _arg(tensor, arg, (None, bool(keepdim))))
        # As in PyTorch, the values are picked at the indices (the first of tied extremes, or
        # the first NaN), so the whole gradient goes to the element the index names.
        index = _arg(tensor, arg, (dim, True))
        values = tensor.gather(dim, index)
        if not keepdim:
            index, values = index.squeeze(dim), values.squeeze(dim)
        return ValuesIndices(values, index)
    axis = kwargs.pop("axis", args[0] if args else None)
    keepdims = kwargs.pop("keepdims", kwargs.pop("keepdim", False))
    if kwargs:
        raise TypeError(f"{which}(axis, keepdims): unexpected arguments {sorted(kwargs)}")
    return op.apply(tensor, axis=axis, keepdims=bool(keepdims))


def _arg(tensor: Any, fn: Any, axis_keep: tuple) -> Any:
    axis, keepdims = axis_keep
    out = fn(tensor._data, axis=axis, keepdims=keepdims)
    return type(tensor)._make(np.asarray(out, dtype=np.int64))
