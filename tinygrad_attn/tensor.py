"""Tensor: an ndarray, its gradient, and the node that made it.

A `Tensor` holds `.data` (an `np.ndarray`), `.grad` (same shape and dtype, or None) and
`.grad_fn` (the `Function` node that produced it; None for leaves). Every maths method is one
line that hands the work to an op class (`def exp(self): return ops.Exp.apply(self)`), so "go to
definition" on any method lands on the op's forward and backward.

This module must not contain derivative code (that lives in `ops/`) nor walk the graph (the
engine does). It imports `ops` and `engine` as modules and looks the classes up when a method
runs, so the import cycle (ops subclass Function, which makes Tensors) closes in one place, at
the end of function.py.
"""

from __future__ import annotations

import collections
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from . import engine, ops
from .inplace import InPlaceMixin
from .tensor_methods import TensorMethods, check_device, resolve_axis, softmax_over_axes

_default_dtype = np.dtype(np.float32)
_rng = np.random.default_rng()


def get_default_dtype() -> np.dtype:
    """The dtype given to Python floats and lists of floats (float32 unless changed)."""
    return _default_dtype


def set_default_dtype(dtype: Any) -> None:
    """Set the dtype for Python float data: `ta.set_default_dtype(np.float64)`."""
    global _default_dtype
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"set_default_dtype: expected a float dtype, got {dtype}")
    _default_dtype = dtype


def manual_seed(seed: int) -> None:
    """Seed the one global random generator (randn, dropout, module initialisation)."""
    global _rng
    _rng = np.random.default_rng(seed)


def get_rng() -> np.random.Generator:
    """The global `np.random.Generator` that `manual_seed` seeds."""
    return _rng


def _array_from(data: Any, dtype: Any, copy: bool) -> np.ndarray:
    """Turn user data into an ndarray following the dtype policy in shared/API.md."""
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, (np.ndarray, np.generic)):
        array = data
    else:
        try:
            array = np.array(data)
        except (ValueError, TypeError) as err:
            raise TypeError(
                f"Tensor: cannot make an array from {type(data).__name__} data ({err}). "
                "Pass a number, a (rectangular) nested list of numbers, or an ndarray."
            ) from None
        copy = False
        if dtype is None and array.dtype.kind == "f":
            dtype = _default_dtype
    # Checked before any cast, which would turn None or "1.5" into floats without a word.
    if array.dtype.kind in "fiub":
        array = np.array(array, dtype=dtype, copy=copy or None)
    if array.dtype.kind not in "fiub":
        raise TypeError(
            f"Tensor: {type(data).__name__} data (NumPy reads it as dtype {array.dtype}) is not "
            "numeric; tinygrad_attn holds float, integer or bool arrays. Convert it first, "
            "e.g. np.asarray(data, dtype=np.float32)."
        )
    return array


def _check_can_require_grad(dtype: np.dtype, where: str) -> None:
    if dtype.kind != "f":
        raise TypeError(
            f"{where}: only float tensors can require grad, but this one has dtype {dtype}. "
            "Make it a float tensor first, e.g. Tensor(data, dtype=np.float32)."
        )


# Python-number constants, shared: `y * 0.5` in a loop makes one constant tensor, not one per
# call. Their arrays are read-only from birth, so sharing them is safe.
_constants: dict[tuple, Tensor] = {}


def as_constant(value: Any, like: Tensor | None = None) -> Tensor:
    """Wrap a Python number or ndarray as a constant tensor (no grad) for an op's input.

    A Python scalar takes the float dtype of `like` (so `x * 2` keeps float32 float32, as
    NumPy does with scalars); an ndarray keeps its dtype and is not copied.
    """
    if isinstance(value, (bool, int, float)):  # first: `x * 2.0` is the common case
        dtype = like.data.dtype if like is not None else None
        key = (value, type(value), dtype)
        if not value or value != value:  # 0.0 == -0.0, nan != nan: key those by their text
            key = (repr(value), type(value), dtype)
        constant = _constants.get(key)
        if constant is None:
            array = np.asarray(
                value, dtype=dtype if dtype is not None and dtype.kind == "f" else None
            )
            array.flags.writeable = False
            if len(_constants) > 4096:  # many distinct numbers (a schedule): start afresh
                _constants.clear()
            constant = _constants[key] = Tensor._make(array)
        return constant
    if isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "fiub":
            raise TypeError(
                f"an operand of dtype {value.dtype} (an ndarray) is not real numbers: "
                "tinygrad_attn computes with float, integer or bool arrays. Convert it first, "
                "e.g. np.asarray(value, dtype=np.float32)."
            )
        return Tensor._make(value)
    return Tensor._make(_array_from(value, None, copy=False))


class ReleasedTensor:
    """What a released graph keeps of an intermediate tensor: its metadata, not its array."""

    data = None
    requires_grad = True
    is_leaf = False

    def __init__(self, shape: tuple, dtype: np.dtype, name: str | None, grad_fn: Any) -> None:
        self.shape = tuple(shape)
        self.dtype = dtype
        self.name = name
        self._node = weakref.ref(grad_fn)  # (the node caches this record: no reference cycle)

    @property
    def grad_fn(self) -> Any:
        return self._node()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self) -> str:
        return (
            f"ReleasedTensor(shape={self.shape}, dtype={self.dtype}, grad_fn=<{self.grad_fn.name}>)"
        )


class Tensor(InPlaceMixin, TensorMethods):  # .data, in-place ops, pickling: inplace.py
    """An n-dimensional array that records the ops applied to it, for reverse-mode autodiff."""

    # Class-level defaults: an op's output sets only what differs (keeps `apply` cheap).
    requires_grad = False
    grad_fn = None
    _grad = None
    _name = None
    _hooks = None
    __array_priority__ = 1000  # so `ndarray + Tensor` calls Tensor.__radd__

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        dtype: Any = None,
        name: str | None = None,
        device: Any = None,
    ) -> None:
        check_device(device)
        self.data = _array_from(data, dtype, copy=True)
        if requires_grad:
            _check_can_require_grad(self.data.dtype, "Tensor(requires_grad=True)")
        self.requires_grad = bool(requires_grad)
        self.grad_fn = None
        self._grad = None
        self._name = name
        self._hooks = None

    @classmethod
    def _make(cls, array: np.ndarray) -> Tensor:
        """Wrap an ndarray without copying or checking (ops' outputs, constants)."""
        tensor = cls.__new__(cls)
        tensor._data = array  # (`.data` is a property: assigning it checks the value)
        return tensor

    # ----------------------------------------------------------------- properties
    @property
    def grad(self) -> np.ndarray | None:
        """The accumulated gradient (leaves, and non-leaves that called `retain_grad()`)."""
        node = self.grad_fn
        if node is not None and not node.retains_output_grad and "_warned" not in vars(node):
            node._warned = True  # once per tensor: a training loop must not flood the output
            label = f" {self._name!r}" if self._name else ""
            warnings.warn(
                f"Reading .grad of a non-leaf tensor{label} (made by {node.name}, shape "
                f"{self.shape}): backward() fills .grad only for leaves, so this is not the "
                "gradient. Call .retain_grad() on it before backward() to keep it, or read "
                ".grad of the leaf it was computed from (a tensor made with requires_grad=True)."
                " This warning is shown once per tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            value = np.asarray(value)
            if value.shape != self.data.shape:
                raise ValueError(
                    f"assigning .grad: shape {value.shape} does not match the tensor's shape "
                    f"{self.data.shape}"
                )
            value = value.astype(self.data.dtype, copy=False)
        self._grad = value

    @property
    def name(self) -> str | None:
        """An optional label shown by the graph renderer and in error messages."""
        return self._name

    @name.setter
    def name(self, value: str | None) -> None:
        self._name = value
        if self.grad_fn is not None:
            self.grad_fn.output_name = value

    @property
    def grad_like(self) -> tuple:
        """(shape, dtype) that this tensor's gradient has: those of its data."""
        return self._data.shape, self._data.dtype

    @property
    def is_leaf(self) -> bool:
        """True for tensors made by the user (not by an op); their `.grad` is kept."""
        return self.grad_fn is None

    @property
    def shape(self) -> tuple:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def T(self) -> Tensor:
        """All axes reversed, as NumPy's `.T`."""
        return self.transpose()

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self.data)

    __hash__ = object.__hash__  # by identity (== is elementwise); C-level, cheap in dicts

    def __bool__(self) -> bool:
        if self.data.size != 1:
            raise ValueError(
                f"The truth value of a tensor of shape {self.shape} is ambiguous; use "
                ".any() / .all() on .data, or compare one element with .item()"
            )
        return bool(self.data)

    # ------------------------------------------------------------- NumPy interop
    def numpy(self) -> np.ndarray:
        """The underlying array (not a copy)."""
        return self.data

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.data if dtype is None else self.data.astype(dtype, copy=False)

    def item(self) -> float | int | bool:
        """The value of a one-element tensor as a Python number."""
        if self.data.size != 1:
            raise ValueError(
                f"item(): only a one-element tensor can be converted to a Python number, but "
                f"this one has shape {self.shape} ({self.data.size} elements). Index it first "
                "(t[i].item()) or use .numpy()."
            )
        return self.data.item()

    def __repr__(self) -> str:
        body = np.array2string(self.data, precision=4, separator=", ", threshold=64)
        body = body.replace("\n", "\n       ")
        extras = []
        if self.data.dtype != _default_dtype:
            extras.append(f"dtype={self.data.dtype}")
        if self.grad_fn is not None:
            extras.append(f"grad_fn=<{self.grad_fn.name}>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        if self._name:
            extras.append(f"name={self._name!r}")
        return "tensor(" + ", ".join([body, *extras]) + ")"

    # ----------------------------------------------------------- autograd hooks
    def backward(self, gradient: Any = None, retain_graph: bool = False) -> None:
        """Reverse-mode pass from this tensor: fills `.grad` of the leaves that require grad."""
        collections.deque(engine.backward_steps(self, gradient, retain_graph), maxlen=0)

    def backward_steps(
        self, gradient: Any = None, retain_graph: bool = False
    ) -> Iterator[engine.BackwardStep]:
        """The backward pass as a generator of `BackwardStep` records, one per graph node."""
        return engine.backward_steps(self, gradient, retain_graph)

    def detach(self) -> Tensor:
        """A new leaf that shares this tensor's data and takes no gradient."""
        return Tensor._make(self.data)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` on a leaf, in place; returns self."""
        if requires_grad:
            _check_can_require_grad(self.data.dtype, "requires_grad_()")
        elif self.grad_fn is not None:
            raise RuntimeError(
                f"requires_grad_(False) on a non-leaf tensor (made by {self.grad_fn.name}); "
                "use .detach() to get a tensor that takes no gradient."
            )
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> Tensor:
        """Keep `.grad` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is not None:
            self.grad_fn.retains_output_grad = True
            self.grad_fn.has_hooks = True
        elif not self.requires_grad:
            raise RuntimeError("retain_grad() on a tensor that does not require grad")
        return self

    def register_hook(self, hook: Callable[[np.ndarray], np.ndarray | None]) -> Callable[[], None]:
        """Call `hook(grad)` when this tensor's gradient is computed; a returned array
        replaces the gradient. Returns a function that removes the hook."""
        if not self.requires_grad:
            raise RuntimeError(
                "register_hook() on a tensor that does not require grad: no gradient will "
                "ever reach it. Call .requires_grad_() on the leaf first."
            )
        if self.grad_fn is not None:
            self.grad_fn.output_hooks = (*self.grad_fn.output_hooks, hook)
            self.grad_fn.has_hooks = True
            node = self.grad_fn

            def remove() -> None:
                node.output_hooks = tuple(h for h in node.output_hooks if h is not hook)

        else:
            self._hooks = (*(self._hooks or ()), hook)

            def remove() -> None:
                self._hooks = tuple(h for h in self._hooks if h is not hook)

        return remove

    # ------------------------------------------------------------------ operators
    def _operand(self, other: Any) -> Tensor:
        return other if other.__class__ is Tensor else as_constant(other, like=self)

    def __add__(self, other: Any) -> Tensor:
        return ops.Add.apply(self, self._operand(other))

    def __radd__(self, other: Any) -> Tensor:
        return ops.Add.apply(self._operand(other), self)

    def __sub__(self, other: Any) -> Tensor:
        return ops.Sub.apply(self, self._operand(other))

    def __rsub__(self, other: Any) -> Tensor:
        return ops.Sub.apply(self._operand(other), self)

    def __mul__(self, other: Any) -> Tensor:
        return ops.Mul.apply(self, self._operand(other))

    def __rmul__(self, other: Any) -> Tensor:
        return ops.Mul.apply(self._operand(other), self)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.Div.apply(self, self._operand(other))

    def __rtruediv__(self, other: Any) -> Tensor:
        return ops.Div.apply(self._operand(other), self)

    def __pow__(self, exponent: Any) -> Tensor:
        return ops.Pow.apply(self, self._operand(exponent))

    def __rpow__(self, base: Any) -> Tensor:
        return ops.Pow.apply(self._operand(base), self)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.MatMul.apply(self, self._operand(other))

    def __rmatmul__(self, other: Any) -> Tensor:
        return ops.MatMul.apply(self._operand(other), self)

    def __neg__(self) -> Tensor:
        return ops.Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    # Comparisons give bool tensors and take no part in the graph.
    def __lt__(self, other: Any) -> Tensor:
        return Tensor._make(ops.elementwise.compare("<", np.less, self.data, other))

    def __le__(self, other: Any) -> Tensor:
        return Tensor._make(ops.elementwise.compare("<=", np.less_equal, self.data, other))

    def __gt__(self, other: Any) -> Tensor:
        return Tensor._make(ops.elementwise.compare(">", np.greater, self.data, other))

    def __ge__(self, other: Any) -> Tensor:
        return Tensor._make(ops.elementwise.compare(">=", np.greater_equal, self.data, other))

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return Tensor._make(ops.elementwise.compare("==", np.equal, self.data, other))

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return Tensor._make(ops.elementwise.compare("!=", np.not_equal, self.data, other))

    # ---------------------------------------------------------------- elementwise
    def add(self, other: Any) -> Tensor:
        return self + other

    def sub(self, other: Any) -> Tensor:
        return self - other

    def mul(self, other: Any) -> Tensor:
        return self * other

    def div(self, other: Any) -> Tensor:
        return self / other

    def pow(self, exponent: Any) -> Tensor:
        return self**exponent

    def neg(self) -> Tensor:
        return ops.Neg.apply(self)

    def exp(self) -> Tensor:
        return ops.Exp.apply(self)

    def log(self) -> Tensor:
        return ops.Log.apply(self)

    def sqrt(self) -> Tensor:
        return ops.Sqrt.apply(self)

    def tanh(self) -> Tensor:
        return ops.Tanh.apply(self)

    def sigmoid(self) -> Tensor:
        return ops.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return ops.Relu.apply(self)

    def abs(self) -> Tensor:
        return ops.Abs.apply(self)

    def erf(self) -> Tensor:
        return ops.Erf.apply(self)

    # ----------------------------------------------------------------- reductions
    # `dim=` / `keepdim=` are PyTorch's spellings of `axis=` / `keepdims=` (tensor_methods.py).
    def sum(self, axis: Any = None, keepdims: Any = None, *, dim=None, keepdim=None) -> Tensor:
        axis, keepdims = resolve_axis("sum", axis, keepdims, dim, keepdim)
        return ops.Sum.apply(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: Any = None, *, dim=None, keepdim=None) -> Tensor:
        axis, keepdims = resolve_axis("mean", axis, keepdims, dim, keepdim)
        return ops.Mean.apply(self, axis=axis, keepdims=keepdims)

    # ---------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> Tensor:
        if not shape:
            raise TypeError("reshape() needs the shape: x.reshape(2, 3), or reshape(()) for 0-d")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.Reshape.apply(self, shape=shape)

    def transpose(self, *axes: Any) -> Tensor:
        """No argument: reverse the axes. Two ints: swap them (PyTorch). A tuple or 3+ ints: a
        permutation (NumPy)."""
        if len(axes) == 2 and all(isinstance(a, (int, np.integer)) for a in axes):
            return self.swapaxes(axes[0], axes[1])
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return ops.Transpose.apply(self, axes=axes or None)

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        return ops.Transpose.apply(self, axes=ops.movement.swapped_axes(self.shape, axis1, axis2))

    def unsqueeze(self, axis: Any = None, *, dim: Any = None) -> Tensor:
        axis, _ = resolve_axis("unsqueeze", axis, None, dim)
        return ops.Reshape.apply(self, shape=ops.movement.unsqueezed_shape(self.shape, axis))

    def squeeze(self, axis: int | Sequence[int] | None = None, *, dim: Any = None) -> Tensor:
        axis, _ = resolve_axis("squeeze", axis, None, dim)
        return ops.Reshape.apply(self, shape=ops.movement.squeezed_shape(self.shape, axis))

    def __getitem__(self, index: Any) -> Tensor:
        return ops.GetItem.apply(self, index=_plain_index(index))

    # ---------------------------------------------------------- attention blocks
    def matmul(self, other: Any) -> Tensor:
        return ops.MatMul.apply(self, self._operand(other))

    def softmax(self, axis: Any = None, *, dim: Any = None) -> Tensor:
        axis, _ = resolve_axis("softmax", axis, None, dim)
        if isinstance(axis, (tuple, list)):
            return softmax_over_axes(self, axis, log=False)
        return ops.Softmax.apply(self, axis=-1 if axis is None else axis)

    def log_softmax(self, axis: Any = None, *, dim: Any = None) -> Tensor:
        axis, _ = resolve_axis("log_softmax", axis, None, dim)
        if isinstance(axis, (tuple, list)):
            return softmax_over_axes(self, axis, log=True)
        return ops.LogSoftmax.apply(self, axis=-1 if axis is None else axis)

    def masked_fill(self, mask: Any, value: float | Tensor) -> Tensor:
        """Where `mask` is True, put `value` (a number, or a 0-d tensor, which gets the filled
        elements' gradient); elsewhere keep self (no gradient where filled)."""
        if isinstance(value, Tensor):
            return ops.MaskedFill.apply(self, as_constant(mask), value)
        return ops.MaskedFill.apply(self, as_constant(mask), value=value)


def _plain_index(index: Any) -> Any:
    """Replace Tensors inside an index by their arrays (integer-array indexing)."""
    if isinstance(index, Tensor):
        return index.data
    if isinstance(index, tuple):
        return tuple(i.data if isinstance(i, Tensor) else i for i in index)
    return index


# ----------------------------------------------------------------- constructors
def from_numpy(array: np.ndarray, requires_grad: bool = False) -> Tensor:
    """A tensor that shares `array` (no copy)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected an np.ndarray, got {type(array).__name__}")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"from_numpy: dtype {array.dtype} is not float, integer or bool")
    if requires_grad:
        _check_can_require_grad(array.dtype, "from_numpy(requires_grad=True)")
    out = Tensor._make(array)
    out.requires_grad = bool(requires_grad)
    return out


def _shape_arg(shape: tuple, fn: str) -> tuple:
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for n in shape:
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
            raise TypeError(f"{fn}: the shape must be non-negative ints, got {tuple(shape)}")
        if n < 0:
            raise ValueError(f"{fn}: the shape must be non-negative ints, got {tuple(shape)}")
    return tuple(shape)


def zeros(*shape: Any, requires_grad: bool = False, dtype: Any = None, device=None) -> Tensor:
    """A tensor of zeros (default float dtype unless `dtype` is given)."""
    check_device(device)
    return from_numpy(np.zeros(_shape_arg(shape, "zeros"), dtype or _default_dtype), requires_grad)


def ones(*shape: Any, requires_grad: bool = False, dtype: Any = None, device=None) -> Tensor:
    """A tensor of ones (default float dtype unless `dtype` is given)."""
    check_device(device)
    return from_numpy(np.ones(_shape_arg(shape, "ones"), dtype or _default_dtype), requires_grad)


def arange(
    *args: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False
) -> Tensor:
    """As `np.arange` (integers give an integer tensor)."""
    check_device(device)
    return from_numpy(np.arange(*args, dtype=dtype), requires_grad)


def randn(*shape: Any, requires_grad: bool = False, dtype: Any = None, device=None) -> Tensor:
    """Standard normal samples from the global generator (`ta.manual_seed`)."""
    check_device(device)
    array = _rng.standard_normal(_shape_arg(shape, "randn")).astype(dtype or _default_dtype)
    return from_numpy(array, requires_grad)


def concatenate(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along an existing axis (`np.concatenate`)."""
    return ops.Concatenate.apply(*ops.movement.tensor_sequence(tensors, "concatenate"), axis=axis)


def stack(tensors: Sequence[Any], axis: int = 0) -> Tensor:
    """Join tensors along a new axis (`np.stack`)."""
    return ops.Stack.apply(*ops.movement.tensor_sequence(tensors, "stack"), axis=axis)


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """`a` where `condition` is True, else `b` (broadcasting); no gradient to `condition`."""
    like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
    return ops.Where.apply(as_constant(condition), as_constant(a, like), as_constant(b, like))
