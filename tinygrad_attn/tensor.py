"""Tensor: an ndarray, its gradient, and the node that made it.

A `Tensor` holds its array (`._data`, an `np.ndarray`; `.numpy()` hands it out), `.grad` (a
Tensor of the same shape and dtype, or None) and `.grad_fn` (the `Function` node that produced
it; None for leaves). A view (a slice, a reshape, a transpose) shares its array's memory with
the tensor it views, `._base`, and knows the view ops that lead there from it, `._view_chain`,
so that an in-place write through it can be recorded against the base (inplace.py). Every
maths method is one line that hands the work to an op class
(`def exp(self): return ops.Exp.apply(self)`), so "go to definition" on any method lands on
the op's forward and backward.

This module must not contain derivative code (`ops/`) nor walk the graph (the engine). It looks
op classes up through the `ops` module when a method runs, so the import cycle (ops subclass
Function, which makes Tensors) closes in one place, at the end of function.py.
"""

from __future__ import annotations

import collections
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from . import engine, ops
from .dtypes import as_constant, float_operands, operands
from .errors import DTypeError, ShapeError
from .graph import ReleasedTensor  # noqa: F401  (what a released graph keeps of a tensor)
from .hooks import RemovableHandle
from .inplace import InPlaceMixin, _array_from, _check_can_require_grad
from .tensor_interop import InteropMixin
from .tensor_methods import TensorMethods, check_device, resolve_axis, softmax_over_axes
from .tensor_reduce import ReduceMethods, averaged, reduce_dims, summand
from .tensor_shape import ShapeMethods


class Tensor(InPlaceMixin, InteropMixin, TensorMethods, ShapeMethods, ReduceMethods):
    """An n-dimensional array that records the ops applied to it, for reverse-mode autodiff.

    Mixins: `.data`, in-place ops and pickling (inplace.py); repr, len, bool, item and NumPy
    conversion (tensor_interop.py); PyTorch's spellings (tensor_methods.py)."""

    __hash__ = object.__hash__  # by identity (== is elementwise); C-level, cheap in dicts

    # Class-level defaults: an op's output sets only what differs (keeps `apply` cheap).
    requires_grad = False
    grad_fn = None
    _grad = None
    _name = None
    _hooks = None
    _base = None  # the tensor whose memory this view shares (None: not a view)
    _view_chain = ()  # the view ops from `_base` to here ((op class, params), ...); None: detach
    _views = None  # weak references to this tensor's views (re-derived after an in-place write)
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
        self._data = _array_from(data, dtype, copy=True)
        if requires_grad:
            _check_can_require_grad(self._data.dtype, "Tensor(requires_grad=True)")
        self.requires_grad = bool(requires_grad)
        self.grad_fn = None
        self._grad = None
        self._name = name
        self._hooks = None

    @classmethod
    def _make(cls, array: np.ndarray) -> Tensor:
        """Wrap an ndarray without copying or checking (ops' outputs, constants)."""
        tensor = cls.__new__(cls)
        tensor._data = array  # (`.data` is a property: a tensor sharing this array)
        return tensor

    # ----------------------------------------------------------------- properties
    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient, a Tensor (leaves, and non-leaves that called
        `retain_grad()`); `.grad.numpy()` is its array."""
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
            array = value._data if isinstance(value, Tensor) else np.asarray(value)
            if array.dtype.kind not in "fiub":  # complex, text, objects: not a real gradient
                raise TypeError(f"assigning .grad: dtype {array.dtype} is not real numbers")
            if array.shape != self._data.shape:
                raise ShapeError(
                    f"assigning .grad: shape {array.shape} does not match the tensor's shape "
                    f"{self._data.shape}; the gradient has the tensor's shape"
                )
            if array.dtype != self._data.dtype:
                raise DTypeError(
                    f"assigning .grad: dtype {array.dtype} does not match the tensor's dtype "
                    f"{self._data.dtype}; convert it first (g.to({self._data.dtype}))"
                )
            value = value if isinstance(value, Tensor) else Tensor._make(array)
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
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    # ----------------------------------------------------------- autograd hooks
    def backward(
        self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
        inputs: Any = None,
    ) -> None:  # fmt: skip
        """Reverse-mode pass from this tensor: fills `.grad` of the leaves that require grad (of
        `inputs` only, if given). With `create_graph=True` each `.grad` is a Tensor with a graph
        of its own, to differentiate again; `retain_graph` defaults to `create_graph`."""
        retain = create_graph if retain_graph is None else retain_graph
        if inputs is not None:  # (PyTorch's `inputs=`: autograd.grad, accumulated into .grad)
            from .autograd import backward  # (the API around the engine: read when asked)

            return backward(self, gradient, retain, create_graph, inputs=inputs)
        with np.errstate(all="ignore"):  # inf and nan arise silently, as in PyTorch's kernels
            steps = engine.backward_steps(self, gradient, bool(retain), create_graph)
            collections.deque(steps, maxlen=0)

    def backward_steps(
        self, gradient: Any = None, retain_graph: bool = False
    ) -> Iterator[engine.BackwardStep]:
        """The backward pass as a generator of `BackwardStep` records, one per graph node."""
        for index, step in enumerate(engine.backward_steps(self, gradient, retain_graph)):
            yield engine.BackwardStep((index, *step))  # (the one loop, each step numbered)

    def detach(self) -> Tensor:
        """A new leaf that shares this tensor's memory (and its version) and takes no
        gradient."""
        out = Tensor._make(self._data)
        out._base, out._view_chain = self._base if self._base is not None else self, None
        return out

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set `requires_grad` on a leaf, in place; returns self."""
        if requires_grad:
            _check_can_require_grad(self._data.dtype, "requires_grad_()")
        elif self.grad_fn is not None:
            raise RuntimeError(
                f"requires_grad_(False) on a non-leaf tensor (made by {self.grad_fn.name}); "
                "use .detach() to get a tensor that takes no gradient."
            )
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Keep `.grad` on this non-leaf tensor after backward (leaves always keep it)."""
        if self.grad_fn is not None:
            self.grad_fn.retains_output_grad = True
            self.grad_fn.watched = True
        elif not self.requires_grad:
            raise RuntimeError("retain_grad() on a tensor that does not require grad")

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call `hook(grad)` (a Tensor) when this tensor's gradient is computed; a returned
        Tensor replaces the gradient. Returns a handle whose `remove()` removes the hook."""
        if not self.requires_grad:
            raise RuntimeError(
                "register_hook() on a tensor that does not require grad: no gradient will "
                "ever reach it. Call .requires_grad_() on the leaf first."
            )
        if self.grad_fn is not None:
            self.grad_fn.output_hooks = (*self.grad_fn.output_hooks, hook)
            self.grad_fn.watched = True
            node = self.grad_fn

            def remove() -> None:
                node.output_hooks = tuple(h for h in node.output_hooks if h is not hook)

        else:
            self._hooks = (*(self._hooks or ()), hook)

            def remove() -> None:
                self._hooks = tuple(h for h in self._hooks if h is not hook)

        return RemovableHandle(remove)

    # ------------------------------------------------------------------ operators
    # Both operands come through `operands` (dtypes.py): PyTorch's type promotion, Python
    # numbers made constant tensors of the result's dtype.
    def __add__(self, other: Any) -> Tensor:
        return ops.Add.apply(*operands(self, other))

    def __radd__(self, other: Any) -> Tensor:
        return ops.Add.apply(*operands(other, self))

    def __sub__(self, other: Any) -> Tensor:
        return ops.Sub.apply(*operands(self, other))

    def __rsub__(self, other: Any) -> Tensor:
        return ops.Sub.apply(*operands(other, self))

    def __mul__(self, other: Any) -> Tensor:
        return ops.Mul.apply(*operands(self, other))

    def __rmul__(self, other: Any) -> Tensor:
        return ops.Mul.apply(*operands(other, self))

    def __truediv__(self, other: Any) -> Tensor:
        return ops.Div.apply(*float_operands(self, other))

    def __rtruediv__(self, other: Any) -> Tensor:
        return ops.Div.apply(*float_operands(other, self))

    def __pow__(self, exponent: Any) -> Tensor:
        return ops.Pow.apply(*operands(self, exponent))

    def __rpow__(self, base: Any) -> Tensor:
        return ops.Pow.apply(*operands(base, self))

    def __matmul__(self, other: Any) -> Tensor:
        return ops.MatMul.apply(*operands(self, other))

    def __rmatmul__(self, other: Any) -> Tensor:
        return ops.MatMul.apply(*operands(other, self))

    def __neg__(self) -> Tensor:
        return ops.Neg.apply(self)

    def __pos__(self) -> Tensor:
        return self

    # ---------------------------------------------------------------- elementwise
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
    # PyTorch's `sum(dim=None, keepdim=False, *, dtype=None)`; `axis=`/`keepdims=` mean the same.
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        dims, keepdim = reduce_dims("sum", self, dim, keepdim, axis, keepdims)
        return ops.Sum.apply(summand(self, dtype), axis=dims, keepdims=keepdim)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None) -> Tensor:
        dims, keepdim = reduce_dims("mean", self, dim, keepdim, axis, keepdims)
        return ops.Mean.apply(averaged(self, dtype), axis=dims, keepdims=keepdim)

    # ---------------------------------------------------------------------- shape
    def reshape(self, *shape: Any) -> Tensor:
        if not shape:
            raise TypeError("reshape() needs the shape: x.reshape(2, 3), or reshape(()) for 0-d")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.Reshape.apply(self, shape=shape)

    def transpose(self, *axes: Any, dim0: Any = None, dim1: Any = None) -> Tensor:
        """Two ints (or `dim0=`, `dim1=`): swap them (PyTorch). No argument: reverse the axes; a
        tuple or 3+ ints: a permutation (NumPy's forms, which PyTorch refuses: an op's backward
        written for ndarrays runs on Tensors too, under create_graph)."""
        axes += tuple(d for d in (dim0, dim1) if d is not None)
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

    def squeeze(self, *dims: Any, dim: Any = None, axis: Any = None) -> Tensor:
        """Drop dims of size 1: all of them, or those given (`squeeze(0)`, `squeeze(0, 2)`,
        `squeeze((0, 2))`, `dim=`)."""
        given = dims[0] if len(dims) == 1 else (tuple(dims) if dims else None)
        axis, _ = resolve_axis("squeeze", axis, None, dim if given is None else given)
        return ops.Reshape.apply(self, shape=ops.movement.squeezed_shape(self.shape, axis))

    def __getitem__(self, index: Any) -> Tensor:
        return ops.GetItem.apply(self, index=_plain_index(index))

    # ---------------------------------------------------------- attention blocks
    def matmul(self, other: Any) -> Tensor:
        return ops.MatMul.apply(*operands(self, other))

    def softmax(self, axis: Any = None, *, dim: Any = None) -> Tensor:
        axis, _ = resolve_axis("softmax", axis, None, dim)
        _needs_dim("softmax", axis)
        if isinstance(axis, (tuple, list)):
            return softmax_over_axes(self, axis, log=False)
        return ops.Softmax.apply(self, axis=-1 if axis is None else axis)

    def log_softmax(self, axis: Any = None, *, dim: Any = None) -> Tensor:
        axis, _ = resolve_axis("log_softmax", axis, None, dim)
        _needs_dim("log_softmax", axis)
        if isinstance(axis, (tuple, list)):
            return softmax_over_axes(self, axis, log=True)
        return ops.LogSoftmax.apply(self, axis=-1 if axis is None else axis)

    def masked_fill(self, mask: Any, value: float | Tensor) -> Tensor:
        """Where `mask` is True, put `value` (a number, or a 0-d tensor, which gets the filled
        elements' gradient); elsewhere keep self (no gradient where filled)."""
        if isinstance(value, Tensor):
            return ops.MaskedFill.apply(self, as_constant(mask), value)
        return ops.MaskedFill.apply(self, as_constant(mask), value=value)


def _needs_dim(op: str, dim: Any) -> None:
    """PyTorch's `t.softmax()` has no default dim: a TypeError that says which to pass."""
    if dim is None:
        raise TypeError(
            f"{op}() needs dim, as PyTorch's Tensor.{op}: {op}(dim=-1) for the last dim. "
            f"(F.{op}(x) without dim picks PyTorch's implicit dim, with its warning.)"
        )


def _plain_index(index: Any) -> Any:
    """Replace Tensors inside an index by their arrays (integer-array indexing)."""
    if isinstance(index, Tensor):
        return index._data
    if isinstance(index, tuple):
        return tuple(i._data if isinstance(i, Tensor) else i for i in index)
    return index
