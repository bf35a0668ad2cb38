"""The reductions of Tensor in PyTorch's meanings: `max`/`min` (a value, or `(values,
indices)` along a dim), `var`/`std` (correction 1 by default, however the dim is spelled),
`argmax`, `sort`/`argsort`/`topk` (NaN counts as the largest value), `gather`, `prod`,
`cumsum`, `logsumexp`, `norm`, `any`/`all`.

`Tensor` inherits `ReduceMethods`. NumPy's meanings of the same names (`np.max(t, axis=0)`,
`np.std(t)`) go through the NumPy protocol (numpy_protocol.py), which calls the ops directly.
`axis=`/`keepdims=` are accepted as aliases of `dim=`/`keepdim=`, with PyTorch's meaning.
This module must not hold derivative code (that lives in `ops/`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from . import ops
from .errors import DTypeError, ShapeError, dim_error
from .tensor_methods import TensorMethods, resolve_axis


class ValuesIndices(NamedTuple):
    """What `max(dim)`, `min(dim)`, `sort` and `topk` return, as PyTorch: `.values`,
    `.indices`."""

    values: Any
    indices: Any


def check_dim(op: str, dim: Any, ndim: int) -> int:
    """`dim` as a non-negative int, or PyTorch's IndexError (a 0-d tensor takes 0 or -1)."""
    if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, (int, np.integer)):
        raise TypeError(f"{op}: dim must be an int, got {type(dim).__name__} {dim!r}")
    span = max(ndim, 1)
    if not -span <= dim < span:
        raise dim_error(op, dim, ndim)
    return int(dim) % span


def check_dims(op: str, dims: Any, ndim: int) -> tuple | None:
    """None, an int or a sequence of dims as a tuple of non-negative ints (range checked)."""
    if dims is None:
        return None
    if isinstance(dims, (tuple, list)):
        return tuple(check_dim(op, d, ndim) for d in dims)
    return (check_dim(op, dims, ndim),)


def reduce_dims(op: str, t: Any, dim: Any, keepdim: Any, axis: Any, keepdims: Any) -> tuple:
    """(dims, keepdim) of `sum`/`mean`: PyTorch's dim (an int, a sequence, or None and () for
    every dim), range checked; `axis=`/`keepdims=` are the same arguments."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{op}(): pass dim= or axis=, not both (they mean the same)")
        dim = axis
    keepdim = bool(keepdim) or bool(keepdims)
    if dim is None or dim == ():
        return None, bool(keepdim)
    return check_dims(op, dim, t._data.ndim), bool(keepdim)


def summand(t: Any, dtype: Any) -> Any:
    """What `sum` adds up: integers and bools as int64 (as PyTorch), or `dtype` if given."""
    if dtype is not None:
        return t.to(dtype)
    kind = t._data.dtype.kind
    return t if kind == "f" or t._data.dtype == np.int64 else t.to(np.int64)


def averaged(t: Any, dtype: Any) -> Any:
    """What `mean` averages: a float tensor (PyTorch refuses integers unless `dtype=`)."""
    if dtype is not None:
        return t.to(dtype)
    if t._data.dtype.kind != "f":
        raise DTypeError(
            f"mean(): could not infer the output dtype of the mean of a {t._data.dtype} tensor: "
            "it takes floating point only. Convert it (t.float().mean()) or pass "
            "dtype=torch.float32."
        )
    return t


def _correction(fn: str, args: tuple, dim: Any, kwargs: dict) -> tuple:
    """(dim, correction, keepdim) of `var`/`std` from PyTorch's spellings: `var(dim,
    unbiased, keepdim)`, `var(unbiased)`, `var(dim, correction=c, keepdim=k)`; NumPy's
    `ddof=` is taken as `correction=` and `axis=`/`keepdims=` as `dim=`/`keepdim=`."""
    args = list(args)
    unbiased = kwargs.pop("unbiased", None)
    if args and isinstance(args[0], (bool, np.bool_)):  # var(True): the legacy `unbiased`
        unbiased = args.pop(0)
    if args:
        if dim is not None:
            raise TypeError(f"{fn}(): dim given twice")
        dim = args.pop(0)
    if args and unbiased is None:
        unbiased = args.pop(0)
    keepdim = kwargs.pop("keepdim", None)
    if args:
        keepdim = args.pop(0)
    if args:
        raise TypeError(f"{fn}(): too many positional arguments")
    correction, ddof = kwargs.pop("correction", None), kwargs.pop("ddof", None)
    keepdims, axis = kwargs.pop("keepdims", None), kwargs.pop("axis", None)
    if kwargs:
        raise TypeError(f"{fn}() got unexpected keyword argument(s) {sorted(kwargs)}")
    given = [c for c in (correction, ddof, unbiased) if c is not None]
    if len(given) > 1:
        raise TypeError(f"{fn}(): give one of correction=, unbiased= (or NumPy's ddof=)")
    if unbiased is not None:
        correction = int(bool(unbiased))
    elif ddof is not None:
        correction = ddof
    dim, keepdim = resolve_axis(fn, axis, keepdims, dim, keepdim)
    return dim, 1 if correction is None else correction, keepdim


class ReduceMethods:
    """The PyTorch-style reductions of `Tensor`."""

    __slots__ = ()

    def any(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Any:
        """Whether any element (along `dim`) is non-zero: a bool tensor, outside the graph."""
        dim, keepdim = resolve_axis("any", axis, None, dim, keepdim)
        dims = check_dims("any", dim, self._data.ndim) if self._data.ndim else None
        return type(self)._make(np.asarray(np.any(self._data, axis=dims, keepdims=keepdim)))

    def all(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Any:
        """Whether every element (along `dim`) is non-zero: a bool tensor, outside the graph."""
        dim, keepdim = resolve_axis("all", axis, None, dim, keepdim)
        dims = check_dims("all", dim, self._data.ndim) if self._data.ndim else None
        return type(self)._make(np.asarray(np.all(self._data, axis=dims, keepdims=keepdim)))

    def count_nonzero(self, *dims: Any, dim: Any = None) -> Any:
        """How many elements are non-zero (along `dim`: an int, a tuple, or several ints)."""
        given = dims[0] if len(dims) == 1 else (tuple(dims) if dims else dim)
        axis = check_dims("count_nonzero", given, self._data.ndim) if self._data.ndim else None
        return type(self)._make(np.asarray(np.count_nonzero(self._data, axis=axis), np.int64))

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """`max()`: the largest value (where elements tie, the gradient is split evenly among
        them, as PyTorch's); `max(dim, keepdim=False)`: `(values, indices)`, the gradient going
        to the element the index names; `max(other)`: `maximum`. (`axis=` means `dim=`.)"""
        return _extreme(self, "max", args, kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """As `max`: `min()`, `min(dim)` -> `(values, indices)`, `min(other)`."""
        return _extreme(self, "min", args, kwargs)

    def var(self, *args: Any, dim: Any = None, **kwargs: Any) -> Any:
        """Variance over `dim` (all by default), dividing by N - correction: PyTorch's default
        correction is 1 (unbiased), whichever way the dim is given (`var(-1)`, `var(dim=-1)`,
        `var(-1, keepdim=True)`); `correction=0` (or `unbiased=False`) divides by N."""
        return _spread(self, ops.Var, "var", args, dim, kwargs)

    def std(self, *args: Any, dim: Any = None, **kwargs: Any) -> Any:
        """sqrt(var), with `var`'s arguments and PyTorch's default correction of 1; its gradient
        at zero spread is 0, as PyTorch's (where var().sqrt() gives NaN)."""
        return _spread(self, ops.Std, "std", args, dim, kwargs)

    def amax(self, dim: Any = (), keepdim: bool = False) -> Any:
        """The largest value over `dim` (all dims by default); ties split the gradient."""
        dims = check_dims("amax", None if dim == () else dim, self._data.ndim)
        return ops.Max.apply(self, axis=dims, keepdims=bool(keepdim))

    def amin(self, dim: Any = (), keepdim: bool = False) -> Any:
        """The smallest value over `dim` (all dims by default); ties split the gradient."""
        dims = check_dims("amin", None if dim == () else dim, self._data.ndim)
        return ops.Min.apply(self, axis=dims, keepdims=bool(keepdim))

    def argmax(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Any:
        """Index of the largest value (of the flattened tensor without `dim`), int64."""
        dim, keepdim = resolve_axis("argmax", axis, None, dim, keepdim)
        return _arg(self, np.argmax, "argmax", dim, keepdim)

    def argmin(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None) -> Any:
        """Index of the smallest value (of the flattened tensor without `dim`), int64."""
        dim, keepdim = resolve_axis("argmin", axis, None, dim, keepdim)
        return _arg(self, np.argmin, "argmin", dim, keepdim)

    def argsort(
        self, dim: int = -1, descending: bool = False, stable: bool = False, *, axis: Any = None
    ) -> Any:
        """The indices that sort along `dim` (int64), as PyTorch: NaN counts as the largest
        value; equal values keep their order (always stable here)."""
        dim, _ = resolve_axis("argsort", axis, None, dim)
        return type(self)._make(
            _order(self._data, check_dim("argsort", dim, self.ndim), descending)
        )

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        """`(values, indices)` sorted along `dim`, as PyTorch (NaN the largest; stable);
        `values` is in the graph, each element's gradient going back where it came from."""
        axis = check_dim("sort", dim, self.ndim)
        index = _order(self._data, axis, descending)
        return ValuesIndices(_take(self, axis, index), type(self)._make(index))

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:  # noqa: A002
        """The k largest (or smallest) values along `dim` and their indices, as PyTorch (NaN
        counts as the largest): `values` is in the graph, `indices` is int64."""
        axis = check_dim("topk", dim, self.ndim)
        length = self._data.shape[axis] if self._data.ndim else 1
        if not 0 <= k <= length:
            raise ShapeError(
                f"topk({k}): k must be in [0, {length}] for dim {dim} of a tensor of shape "
                f"{self.shape} (selected index k out of range)"
            )
        order = _order(self._data, axis, largest)
        index = np.take(order, np.arange(k), axis=axis) if self._data.ndim else order
        return ValuesIndices(_take(self, axis, index), type(self)._make(index))

    def gather(self, dim: int, index: Any) -> Any:
        """out[i][j] = self[index[i][j]][j] along `dim` (PyTorch's gather): `index` has the
        same number of dims as self, and no larger size except along `dim`; repeated indices
        add up their gradients."""
        index = np.asarray(index._data if isinstance(index, TensorMethods) else index)
        axis = check_dim("gather", dim, self._data.ndim)
        _check_index(self, "gather", axis, index)
        return _take(self, axis, index)

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> Any:  # fmt: skip
        """A copy of self with out[... index[i][j] ...] = src[i][j] along `dim` (PyTorch's
        scatter): `src` a tensor (its leading part, index's shape) or a number (`value=`);
        `reduce="add"` adds instead (scatter_add). The gradient: self's, 0 where written; src's,
        the output's gradient gathered at `index`."""
        if reduce not in (None, "add"):
            raise NotImplementedError(
                f"scatter(reduce={reduce!r}): only reduce='add' (scatter_add) is supported; "
                "for products use torch.scatter_reduce's meaning with a loop, or logs and add"
            )
        where, values = _scatter_args(self, "scatter", dim, index, value if src is None else src)
        if reduce == "add":
            return self + ops.IndexAdd.apply(values, index=where, shape=self.shape)
        return ops.IndexPut.apply(self, values, index=where)

    def scatter_add(self, dim: int, index: Any, src: Any) -> Any:
        """A copy of self with src[i][j] added at out[... index[i][j] ...] along `dim`
        (repeated indices add up), as PyTorch's scatter_add."""
        return self.scatter(dim, index, src, reduce="add")

    def scatter_(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                 reduce: str | None = None) -> Any:  # fmt: skip
        """`scatter` written into self (recorded in the graph when it takes a gradient)."""
        from .inplace import modify

        other = src if isinstance(src, TensorMethods) else None
        scattered = lambda t: t.scatter(dim, index, src, value=value, reduce=reduce)  # noqa: E731
        return modify(self, "scatter_", scattered, other)

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Any:
        """`scatter_add` written into self."""
        return self.scatter_(dim, index, src, reduce="add")

    def logsumexp(self, dim: Any, keepdim: bool = False) -> Any:
        """log(sum(exp(x))) over `dim`, without overflow (F.logsumexp); gradient: softmax."""
        from .functional import logsumexp  # (it imports this module: read when called)

        return logsumexp(self, dim, keepdim)

    def prod(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None, dtype=None):
        """Product over `dim` (all by default); the gradient is the product of the other
        elements (exact at zeros too)."""
        dim, keepdim = resolve_axis("prod", axis, None, dim, keepdim)
        source = self if dtype is None else self.to(dtype)
        dims = check_dims("prod", dim, self._data.ndim)
        return ops.Prod.apply(source, axis=dims, keepdims=keepdim)

    def cumsum(self, dim: Any = None, *, axis: Any = None, dtype: Any = None) -> Any:
        """Running sum along `dim`, which PyTorch requires (NumPy's running sum of the
        flattened tensor is `np.cumsum(t)`)."""
        dim, _ = resolve_axis("cumsum", axis, None, dim)
        if dim is None:
            raise TypeError(
                "cumsum() needs dim, as PyTorch's: cumsum(dim=-1). NumPy's running sum of the "
                "flattened tensor is np.cumsum(t), or t.flatten().cumsum(0)."
            )
        source = self if dtype is None else self.to(dtype)
        axis = check_dim("cumsum", dim, self._data.ndim)
        if self._data.ndim == 0:  # (a 0-d tensor's running sum is itself, still 0-d)
            return ops.Cumsum.apply(source.reshape(1), axis=0).reshape(())
        return ops.Cumsum.apply(source, axis=axis)

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Any:
        """The vector p-norm over `dim` (all by default), as torch.norm: p = 2 or "fro", any
        p > 0, inf / -inf (the largest / smallest |x|) or 0 (the count of non-zeros, gradient
        0). At the zero vector the gradient is 0, as in PyTorch."""
        if p == np.inf or p == -np.inf:
            return self.abs().amax(dim, keepdim) if p > 0 else self.abs().amin(dim, keepdim)
        if p == 0:
            count = (self != 0).to(self.dtype).sum(dim=dim, keepdim=keepdim)
            return (self * 0).sum(dim=dim, keepdim=keepdim) + count
        if isinstance(p, str) and p != "fro":
            raise ValueError(f"norm: p={p!r} is not a vector norm; use 2 ('fro'), a number or inf")
        dims = check_dims("norm", dim, self._data.ndim)
        return ops.Norm.apply(self, p=2 if p == "fro" else p, axis=dims, keepdims=bool(keepdim))


def _extreme(tensor: Any, which: str, args: tuple, kwargs: dict) -> Any:
    """`max`/`min` in PyTorch's three forms: no dim, a dim (values and indices), another
    tensor (elementwise)."""
    op = ops.Max if which == "max" else ops.Min
    if (args and isinstance(args[0], TensorMethods)) or "other" in kwargs:
        other = args[0] if args else kwargs.pop("other")
        return tensor.maximum(other) if which == "max" else tensor.minimum(other)
    dim = kwargs.pop("dim", kwargs.pop("axis", args[0] if args else None))
    keepdim = kwargs.pop("keepdim", kwargs.pop("keepdims", args[1] if len(args) > 1 else False))
    if kwargs or len(args) > 2:
        raise TypeError(f"{which}(dim, keepdim=False): unexpected arguments {sorted(kwargs)}")
    if tensor._data.size == 0 and (dim is None or tensor._data.ndim == 0):
        raise ShapeError(
            f"{which}(): the tensor is empty (shape {tensor.shape}), so it has no {which}imum; "
            "give a dim whose length is not 0"
        )
    if dim is None:
        return op.apply(tensor, axis=None, keepdims=False)
    if isinstance(dim, (tuple, list)):
        raise TypeError(
            f"{which}(dim=...) takes one dim and returns (values, indices); for the "
            f"{which}imum over several dims use a{which}(dim={tuple(dim)})"
        )
    axis = check_dim(which, dim, tensor._data.ndim)
    if tensor._data.ndim == 0:  # (PyTorch: the value itself, and index 0)
        zero = type(tensor)._make(np.zeros((), np.int64))
        return ValuesIndices(tensor * 1, zero)
    if tensor._data.shape[axis] == 0:
        raise ShapeError(
            f"{which}(): cannot take the {which}imum along dim {dim} of length 0 "
            f"(shape {tensor.shape})"
        )
    # As in PyTorch, the values are picked at the indices (the first of tied extremes, or
    # the first NaN: NumPy's argmax and argmin stop there too), so the whole gradient goes to
    # the element the index names.
    arg = np.argmax if which == "max" else np.argmin
    index = np.asarray(arg(tensor._data, axis=axis, keepdims=True), dtype=np.int64)
    values = _take(tensor, axis, index)
    index = type(tensor)._make(index)
    if not keepdim:
        index, values = index.squeeze(axis), values.squeeze(axis)
    return ValuesIndices(values, index)


def _arg(tensor: Any, fn: Any, op: str, dim: Any, keepdim: bool) -> Any:
    if dim is None:
        out = fn(tensor._data)
        shape = (1,) * tensor._data.ndim if keepdim else ()
        return type(tensor)._make(np.asarray(out, dtype=np.int64).reshape(shape))
    axis = check_dim(op, dim, tensor._data.ndim)
    if tensor._data.ndim == 0:
        return type(tensor)._make(np.zeros((), np.int64))
    out = fn(tensor._data, axis=axis, keepdims=keepdim)
    return type(tensor)._make(np.asarray(out, dtype=np.int64))


def _order(data: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The stable sorting order of `data` along `axis`, NaN counting as the largest value (as
    PyTorch's sort): ascending puts NaN last; descending is the ascending order of the array
    read backwards, reversed, so NaN come first and equal values keep their order."""
    if data.ndim == 0:
        return np.zeros((), np.int64)
    if not descending:
        return np.argsort(data, axis=axis, kind="stable").astype(np.int64)
    backwards = np.flip(data, axis)
    order = np.argsort(backwards, axis=axis, kind="stable")
    return np.flip(data.shape[axis] - 1 - order, axis).astype(np.int64)


def _take(tensor: Any, axis: int, index: np.ndarray) -> Any:
    """The elements at `index` along `axis` (take_along_axis) as an op of the graph."""
    if tensor._data.ndim == 0:
        return tensor * 1
    grid = list(np.ogrid[tuple(slice(n) for n in index.shape)])
    grid[axis] = index
    return tensor[tuple(grid)]


def _scatter_args(tensor: Any, op: str, dim: int, index: Any, src: Any) -> tuple:
    """(the index tuple that names each written element, the values as a tensor of index's
    shape) for scatter, with PyTorch's checks."""
    from .creation import tensor as as_tensor

    index = np.asarray(index._data if isinstance(index, TensorMethods) else index)
    axis = check_dim(op, dim, tensor._data.ndim)
    _check_index(tensor, op, axis, index)
    if src is None:
        raise TypeError(f"{op}(): give the values: a src tensor, or a number (value=...)")
    if isinstance(src, TensorMethods):
        if src.dtype != tensor.dtype:
            raise DTypeError(
                f"{op}(): expected self.dtype to be equal to src.dtype, got {tensor.dtype} and "
                f"{src.dtype}; convert one first (src.to(self.dtype))"
            )
        if src.ndim != index.ndim or any(n > m for n, m in zip(index.shape, src.shape)):
            raise ShapeError(
                f"{op}(): index {index.shape} must have src's number of dims and be no larger "
                f"than src {tuple(src.shape)} along any dim"
            )
        values = src[tuple(slice(n) for n in index.shape)] if src.ndim else src * 1
    else:
        values = as_tensor(np.full(index.shape, src, dtype=tensor.dtype))
    if tensor._data.ndim == 0:
        return (), values.reshape(())
    grid = list(np.ogrid[tuple(slice(n) for n in index.shape)])
    grid[axis] = index
    return tuple(grid), values


def _check_index(tensor: Any, op: str, axis: int, index: np.ndarray) -> None:
    """PyTorch's rules for a gather/scatter index: integer, as many dims as the tensor, no
    larger except along `axis`, every value in range."""
    shape = tensor._data.shape
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}(): the index must be an integer tensor, got dtype {index.dtype}")
    if index.ndim != len(shape) and not (index.ndim <= 1 and len(shape) <= 1):
        raise ShapeError(
            f"{op}(): the index has {index.ndim} dims but the tensor has {len(shape)} (shape "
            f"{shape}); index tensor must have the same number of dimensions as input tensor"
        )
    for d, (n, m) in enumerate(zip(index.shape, shape)):
        if d != axis and n > m:
            raise ShapeError(
                f"{op}(): index shape {index.shape} is larger than the tensor's {shape} "
                f"along dim {d}, which is not the gather dim {axis}"
            )
    size = shape[axis] if shape else 1
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = index.max() if index.max() >= size else index.min()
        raise IndexError(
            f"{op}(): index {int(bad)} is out of bounds for dim {axis} with size {size}"
        )


def _spread(t: Any, op: Any, name: str, args: tuple, dim: Any, kwargs: dict) -> Any:
    """var and std: PyTorch's arguments read, then the op."""
    dim, correction, keepdim = _correction(name, args, dim, kwargs)
    dims = check_dims(name, dim, t._data.ndim)
    if t._data.dtype.kind != "f":
        raise DTypeError(
            f"{name} of a {t._data.dtype} tensor: var and std take floating point only (as "
            f"PyTorch); convert first, e.g. t.float().{name}()"
        )
    return op.apply(t, axis=dims, keepdims=keepdim, ddof=correction)
