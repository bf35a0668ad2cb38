"""NumPy functions called on Tensors: `np.exp(t)`, `np.sum(t, axis=0)`, `ndarray + t`.

Tensor's `__array_ufunc__` / `__array_function__` come here. A NumPy function with a Tensor
counterpart records that op (the same node as the method would); any other NumPy function runs
on the data when no gradient can be lost (no input requires grad, or the result is not a float
array) and is otherwise refused with a TypeError, so the graph is never dropped silently.
`np.asarray(t)` is not affected: it returns the data, as before.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import ops

# ufunc -> the Tensor method that computes it (one input, or two for the binary ones).
_UNARY = {
    np.exp: "exp",
    np.log: "log",
    np.sqrt: "sqrt",
    np.tanh: "tanh",
    np.sin: "sin",
    np.cos: "cos",
    np.log1p: "log1p",
    np.expm1: "expm1",
    np.log2: "log2",
    np.square: "square",
    np.reciprocal: "reciprocal",
    np.absolute: "abs",
    np.negative: "neg",
    np.positive: "__pos__",
    np.sign: "sign",
}
_BINARY = {
    np.add: "__add__",
    np.subtract: "__sub__",
    np.multiply: "__mul__",
    np.true_divide: "__truediv__",
    np.power: "__pow__",
    np.matmul: "__matmul__",
    np.maximum: "maximum",
    np.minimum: "minimum",
    np.floor_divide: "__floordiv__",
    np.remainder: "__mod__",
    np.less: "__lt__",
    np.less_equal: "__le__",
    np.greater: "__gt__",
    np.greater_equal: "__ge__",
    np.equal: "__eq__",
    np.not_equal: "__ne__",
}


def _tensor_class():
    from .tensor import Tensor

    return Tensor


def _data(value: Any) -> Any:
    Tensor = _tensor_class()
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (list, tuple)):
        return type(value)(_data(v) for v in value)
    return value


def _needs_grad(values: Any) -> bool:
    Tensor = _tensor_class()
    for value in values:
        if isinstance(value, Tensor) and value.requires_grad:
            return True
        if isinstance(value, (list, tuple)) and _needs_grad(value):
            return True
    return False


def _plain(name: str, fn: Any, args: tuple, kwargs: dict) -> Any:
    """`fn` on the data; refused if it would return floats for inputs that require grad."""
    result = fn(*_data(args), **{k: _data(v) for k, v in kwargs.items()})
    values = result if isinstance(result, tuple) else (result,)
    floats = any(np.asarray(v).dtype.kind in "fc" for v in values if v is not None)
    if floats and _needs_grad(list(args) + list(kwargs.values())):
        raise TypeError(
            f"np.{name} on a Tensor that requires grad would return a plain array and drop the "
            "graph. Use the Tensor method or a tinygrad_attn function instead (e.g. t.exp(), "
            "t.sum(axis=0), ta.where), or np.{name}(t.detach()) if no gradient is wanted."
        )
    return result


def apply_ufunc(owner: Any, ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict) -> Any:
    Tensor = _tensor_class()
    name = ufunc.__name__
    if kwargs.get("out") is not None:
        raise TypeError(
            f"np.{name}(..., out=...) cannot write into a Tensor; use the result of "
            f"np.{name}(...) (which records the op) instead"
        )
    if method == "__call__" and not kwargs:
        if len(inputs) == 1 and ufunc in _UNARY:
            return getattr(inputs[0], _UNARY[ufunc])()
        if len(inputs) == 2 and ufunc in _BINARY:
            a, b = inputs
            method_name = _BINARY[ufunc]
            if isinstance(a, Tensor):
                return getattr(a, method_name)(b)
            # `ndarray + t`: the array is the left operand.
            from .dtypes import as_constant  # (checks the array holds real numbers)

            return getattr(as_constant(np.asarray(a)), method_name)(b)
    label = name if method == "__call__" else f"{name}.{method}"
    return _plain(label, getattr(ufunc, method), inputs, kwargs)


# NumPy's reductions with NumPy's meaning (a value, never (values, indices); ddof=0), recorded
# as the ops themselves: the Tensor methods of the same names mean what PyTorch means.
def _reduce(name: str, op: Any, a: Any, axis: Any, keepdims: bool, extras: dict, **params: Any):
    if any(v is not None and v is not np._NoValue for v in extras.values()):
        return _plain(name, getattr(np, name), (a,), {"axis": axis, "keepdims": keepdims, **extras})
    return op.apply(_as(a), axis=axis, keepdims=bool(keepdims), **params)


def _sum(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _reduce("sum", ops.Sum, a, axis, keepdims, {"dtype": dtype, "out": out, **kw})


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _reduce("mean", ops.Mean, a, axis, keepdims, {"dtype": dtype, "out": out, **kw})


def _max(a, axis=None, out=None, keepdims=False, **kw):
    return _reduce("max", ops.Max, a, axis, keepdims, {"out": out, **kw})


def _min(a, axis=None, out=None, keepdims=False, **kw):
    return _reduce("min", ops.Min, a, axis, keepdims, {"out": out, **kw})


def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    if dtype is not None or out is not None or kw:
        extras = {"dtype": dtype, "out": out, "ddof": ddof, **kw}
        return _plain("var", np.var, (a,), {"axis": axis, "keepdims": keepdims, **extras})
    return ops.Var.apply(_as(a), axis=axis, keepdims=bool(keepdims), ddof=ddof)


def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
    if dtype is not None or out is not None or kw:
        extras = {"dtype": dtype, "out": out, "ddof": ddof, **kw}
        return _plain("std", np.std, (a,), {"axis": axis, "keepdims": keepdims, **extras})
    return ops.Std.apply(_as(a), axis=axis, keepdims=bool(keepdims), ddof=ddof)


def _prod(a, axis=None, dtype=None, out=None, keepdims=False, **kw):
    return _reduce("prod", ops.Prod, a, axis, keepdims, {"dtype": dtype, "out": out, **kw})


def _no_extras(name: str, **extras: Any) -> None:
    used = sorted(k for k, v in extras.items() if v is not None and v is not np._NoValue)
    if used:
        raise TypeError(f"np.{name} on a Tensor: the argument(s) {used} are not supported")


def _concatenate(arrays, axis=0, **kw):
    from .creation import concatenate

    _no_extras("concatenate", **kw)
    return concatenate(list(arrays), axis=axis)


def _stack(arrays, axis=0, **kw):
    from .creation import stack

    _no_extras("stack", **kw)
    return stack(list(arrays), axis=axis)


def _where(condition, x=None, y=None):
    from .creation import where

    if x is None or y is None:
        return np.where(_data(condition))
    return where(condition, x, y)


def _expand_dims(a: Any, axis: Any) -> Any:
    """np.expand_dims, one axis or several (positions in the result, as NumPy counts them)."""
    axes = [axis] if isinstance(axis, int) else list(axis)
    ndim = a.ndim + len(axes)
    positions = {int(x) % ndim for x in axes}
    sizes = iter(a.shape)
    return a.reshape(tuple(1 if i in positions else next(sizes) for i in range(ndim)))


def _as(a: Any) -> Any:
    Tensor = _tensor_class()
    return a if isinstance(a, Tensor) else Tensor(a)


def _like(fill: Any) -> Any:
    """np.zeros_like / ones_like of a tensor: a tensor (no gradient) of its shape and dtype."""

    def like(a: Any, dtype: Any = None, **kw: Any) -> Any:
        from .creation import full_like

        return full_like(a, fill, dtype=dtype)

    return like


def _einsum(subscripts: str, *operands: Any, **kw: Any) -> Any:
    from .torch_functions import einsum

    _no_extras("einsum", **kw)
    return einsum(subscripts, *operands)


_FUNCTIONS = {
    np.einsum: _einsum,
    np.zeros_like: _like(0),
    np.ones_like: _like(1),
    np.sum: _sum,
    np.mean: _mean,
    np.max: _max,
    np.amax: _max,
    np.min: _min,
    np.amin: _min,
    np.var: _var,
    np.std: _std,
    np.prod: _prod,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.where: _where,
    np.reshape: lambda a, shape, **kw: _as(a).reshape(shape),
    np.transpose: lambda a, axes=None: _as(a).permute(axes) if axes is not None else _as(a).T,
    np.swapaxes: lambda a, axis1, axis2: _as(a).swapaxes(axis1, axis2),
    np.moveaxis: lambda a, source, destination: _as(a).moveaxis(source, destination),
    np.squeeze: lambda a, axis=None: _as(a).squeeze(axis),
    np.expand_dims: lambda a, axis: _expand_dims(_as(a), axis),
    np.clip: lambda a, a_min=None, a_max=None, **kw: _as(a).clamp(a_min, a_max),
    np.cumsum: lambda a, axis=None, **kw: (
        _as(a).flatten().cumsum(0) if axis is None else _as(a).cumsum(axis)
    ),
    np.flip: lambda m, axis=None: _as(m).flip(tuple(range(np.ndim(m))) if axis is None else axis),
    np.roll: lambda a, shift, axis=None: _as(a).roll(shift, axis),
    np.tile: lambda a, reps: _as(a).repeat(reps),
    np.broadcast_to: lambda array, shape, **kw: _as(array).broadcast_to(shape),
    np.tril: lambda m, k=0: _as(m).tril(k),
    np.triu: lambda m, k=0: _as(m).triu(k),
    np.dot: lambda a, b, out=None: _as(a) @ b,
    np.ravel: lambda a, order="C": _as(a).reshape(-1),
}


def apply_function(func: Any, args: tuple, kwargs: dict) -> Any:
    handler = _FUNCTIONS.get(func)
    if handler is not None:
        return handler(*args, **kwargs)
    return _plain(func.__name__, func, args, kwargs)
