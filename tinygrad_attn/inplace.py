"""A tensor's data: made from user values (`Tensor(data)`), changed after it was made (`.data =
...`, in-place ops), and pickled.

`Tensor` inherits these from `InPlaceMixin`; they follow PyTorch's rules without its version
counters:

- `t.data = value` converts lists and numbers and refuses what is not numeric. A tensor that
  requires grad stays float (integer data takes its dtype); a float array of another dtype
  changes the dtype, as in PyTorch, and `.grad` is converted with it. A new shape needs `.grad`
  to be None first; a non-leaf keeps its shape and dtype. So `.grad` always matches `.data`.
- Under `no_grad()` (or on a tensor that needs no gradient) the in-place ops `+= -= *= /= **=`
  and `add_ sub_ mul_ div_ zero_ fill_ copy_ normal_ uniform_` (and the in-place forms of
  functions, `relu_ clamp_ masked_fill_ exp_ tanh_ sigmoid_ neg_`) write into the SAME tensor: a
  module's parameter stays the object that `parameters()` and `state_dict()` hold, the manual
  SGD step `with no_grad(): w -= lr * w.grad` updates `w` itself.
- With grad mode on, an in-place op on a leaf that requires grad is a RuntimeError (the graph
  could not record it). An in-place method on a non-leaf is one in either mode; the operators
  rebind it instead (`c += d` on a non-leaf is `c = c + d`), as they do a plain tensor combined
  with one that requires grad. `@=` is never in place (as in PyTorch).
- An array a live graph saved for backward is never written: the op (or `t[i] = v`) fails with
  a ValueError naming the op that saved it; only an optimizer's step replaces it instead
  (optim.py). An array that is read-only for good (an op's result, an unpickled or user-frozen
  array) is replaced by a private writable copy first, so "every result is read-only from
  birth" never gets in the way of `zero_()`.
- Pickling keeps the data, requires_grad, name and grad (copied: NumPy unpickles large arrays
  onto read-only bytes); a tensor made by an op pickles as a leaf with its data, as in PyTorch.

This module must not compute gradients or make graph nodes itself (a rebinding operator calls
the ordinary one: `c += d` on a non-leaf runs `c + d`).
"""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np

from . import tensor as _tensor  # (tensor.py imports this module first; names are read late)
from .saved import saved_by
from .state import get_default_dtype, get_rng, is_grad_enabled, no_grad


def _label(t: Any) -> str:
    return f" {t._name!r}" if t._name else ""


def _describe(t: Any) -> str:
    return f"tensor{_label(t)} (shape {t._data.shape}, {t._data.dtype})"


def _numeric(value: Any, where: str) -> np.ndarray:
    """`value` as an ndarray (a Tensor gives its data), or a TypeError unless it is numeric."""
    if isinstance(value, _tensor.Tensor):
        return value.data
    what = type(value).__name__
    if not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value)
        except ValueError:
            raise TypeError(
                f"{where}: cannot make an array from {what} data (a ragged list?); pass a "
                "number, a rectangular nested list of numbers or an ndarray"
            ) from None
    if value.dtype.kind not in "fiub":
        raise TypeError(
            f"{where}: {what} data of dtype {value.dtype} is not real numbers (float, integer "
            "or bool); convert it first, e.g. np.asarray(value, dtype=np.float32)"
        )
    return value


def _array_from(data: Any, dtype: Any, copy: bool) -> np.ndarray:
    """Turn user data into an ndarray following the dtype policy in shared/API.md."""
    if isinstance(data, _tensor.Tensor):
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
            dtype = get_default_dtype()
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


def _new_data(t: Any, value: Any) -> np.ndarray:
    """The array `t.data = value` stores: checked and converted (see the module docstring)."""
    old = t._data
    where = f"assigning .data of {_describe(t)}"
    array = _numeric(value, where)
    if array.dtype.kind == "f" and not isinstance(value, (np.ndarray, np.generic, _tensor.Tensor)):
        # Python floats take the tensor's float dtype (or the default one), as in Tensor(...)
        array = array.astype(old.dtype if old.dtype.kind == "f" else get_default_dtype())
    if array.dtype != old.dtype and (
        t.requires_grad or t._grad is not None or t.grad_fn is not None
    ):
        if t.grad_fn is not None or array.dtype.kind != "f":
            array = array.astype(old.dtype)  # a node keeps its dtype; a parameter stays float
        elif t._grad is not None:
            t._grad = t._grad.astype(array.dtype)  # a float dtype change (`.to(np.float64)`)
    if array.shape != old.shape:
        if t.grad_fn is not None:
            raise ValueError(
                f"{where}: a non-leaf tensor (made by {t.grad_fn.name}) keeps its shape "
                f"{old.shape}, but the new data has shape {array.shape}; make a new tensor "
                "(Tensor(value)) instead"
            )
        if t._grad is not None:
            raise ValueError(
                f"{where}: the new data has shape {array.shape} but .grad has shape "
                f"{t._grad.shape}; .grad must match .data. Set .grad = None first (or assign "
                "data of the same shape)."
            )
    return array


def _check_may_write(t: Any, op: str, other: Any, instead: str | None = None) -> None:
    """A RuntimeError unless an in-place `op` may change `t` without hiding it from a graph
    (`instead`: the out-of-place form to suggest; the arithmetic ops' by default)."""
    if t.grad_fn is not None:
        fix = instead or "c = c + value; the operators +=, -=, *=, /= do that for you"
        raise RuntimeError(
            f"{op}: in-place change of a non-leaf {_describe(t)}, made by {t.grad_fn.name}: "
            f"the graph may need the value it has. Compute a new tensor instead ({fix})."
        )
    if not is_grad_enabled():
        return
    if t.requires_grad:
        raise RuntimeError(
            f"{op}: in-place change of the leaf{_label(t)} (shape {t._data.shape}), which "
            "requires grad, outside no_grad(): the graph could not record it, and arrays "
            "already saved for backward would no longer match. Update parameters inside "
            "`with ta.no_grad():` (as an optimizer does), or compute a new tensor (w2 = w - 1)."
        )
    if isinstance(other, _tensor.Tensor) and other.requires_grad:
        fix = instead or "x = x + value (or x += value, which does that)"
        raise RuntimeError(
            f"{op}: the value requires grad, but an in-place method records no graph, so its "
            f"gradient would be lost. Write {fix}."
        )


def _writable_data(t: Any, op: str) -> np.ndarray:
    """The array an in-place op may write: `t.data`, or a private copy of it when it is
    read-only for good. A ValueError if a live graph saved it (or memory it shares)."""
    array = t._data
    ops = saved_by(array)
    if ops:
        raise ValueError(
            f"{op}: {_describe(t)} is read-only: it was saved for backward by "
            f"{', '.join(dict.fromkeys(ops))}, so changing it now would silently change that "
            "graph's gradients. Run backward() first (or drop the graph you no longer need: "
            "del loss), then change it."
        )
    return array if array.flags.writeable else array.copy()


def _fits(op: str, target: np.ndarray, value: np.ndarray) -> None:
    try:
        fits = np.broadcast_shapes(target.shape, value.shape) == target.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(
            f"{op}: a value of shape {value.shape} does not fit a tensor of shape "
            f"{target.shape}; in place, the value must broadcast to the tensor's shape "
            "without enlarging it"
        )


class InPlaceMixin:
    """`.data`, the in-place ops and pickling for `Tensor` (see the module docstring)."""

    _data: Any = None

    def _set_data(self, value: Any) -> None:
        self._data = value if self._data is None else _new_data(self, value)
        self._exposed = True  # the caller may hold this array (saved.py locks it when saved)

    data = property(
        operator.attrgetter("_data"),
        _set_data,
        doc="The np.ndarray. Assigning converts it and keeps `.grad` in step (inplace.py).",
    )

    # ------------------------------------------------------------------ in-place ops
    def _inplace(self, op: str, ufunc: np.ufunc, other: Any, alpha: Any = None) -> Any:
        """The one place an arithmetic in-place op writes: `self.data = ufunc(self.data, v)`."""
        _check_may_write(self, op, other)
        if isinstance(other, (float, int)) and not isinstance(other, bool):
            value = other  # a Python number stays one: NumPy then computes in the tensor's dtype
        else:
            value = _numeric(other, op)
        if alpha is not None:
            value = value * alpha
        target = _writable_data(self, op)
        if isinstance(value, np.ndarray):
            _fits(op, target, value)
        try:
            ufunc(target, value, out=target, casting="same_kind")
        except TypeError:
            result = ufunc(np.ones(1, target.dtype), np.ones(1, np.asarray(value).dtype)).dtype
            raise TypeError(
                f"{op}: {ufunc.__name__} of a {target.dtype} tensor and a "
                f"{np.asarray(value).dtype} value gives {result}, which cannot be written into "
                f"the {target.dtype} tensor in place; compute a new tensor instead"
            ) from None
        self._data = target
        self._exposed = True  # (it may be a new, writable copy)
        return self

    def _overwrite(self, op: str, value: Any) -> Any:
        """`zero_`, `fill_` and `copy_` (casting like PyTorch's copy_)."""
        _check_may_write(self, op, value)
        return self._write(op, _numeric(value, op), casting="unsafe")

    def _write(self, op: str, value: np.ndarray, casting: str) -> Any:
        """The one place `_overwrite` and `_apply_` write `value` in, once checked."""
        target = _writable_data(self, op)
        _fits(op, target, value)
        np.copyto(target, value, casting=casting)
        self._data = target
        self._exposed = True  # (it may be a new, writable copy)
        return self

    def _write_at(self, index: Any, value: Any) -> None:
        """`t[index] = value` (tensor_methods.py checks grad mode first), by the same rule as the
        in-place ops: an array a live graph saved is not written (a ValueError naming the op),
        one that is read-only for good is replaced by a written copy."""
        target = _writable_data(self, "item assignment")
        target[index] = value
        self._data = target
        self._exposed = True  # (it may be a new, writable copy)

    def _rebinds(self, other: Any) -> bool:
        """True where `x op= y` must build a graph node (a new tensor) rather than write."""
        if self.grad_fn is not None:
            return True
        return (
            isinstance(other, _tensor.Tensor)
            and other.requires_grad
            and not self.requires_grad
            and is_grad_enabled()
        )

    def __iadd__(self, other: Any) -> Any:
        return self + other if self._rebinds(other) else self._inplace("add_()", np.add, other)

    def __isub__(self, other: Any) -> Any:
        if self._rebinds(other):
            return self - other
        return self._inplace("sub_()", np.subtract, other)

    def __imul__(self, other: Any) -> Any:
        if self._rebinds(other):
            return self * other
        return self._inplace("mul_()", np.multiply, other)

    def __itruediv__(self, other: Any) -> Any:
        if self._rebinds(other):
            return self / other
        return self._inplace("div_()", np.true_divide, other)

    def __ipow__(self, other: Any) -> Any:
        if self._rebinds(other):
            return self**other
        return self._inplace("pow_()", np.power, other)

    def __imatmul__(self, other: Any) -> Any:
        if self._rebinds(other):
            return self @ other
        # (without this method Python would rebind `w @= m` to a new tensor, losing the leaf)
        raise RuntimeError(
            f"@=: in-place matmul of {_describe(self)} is not supported (the shape may change), "
            "as in PyTorch; write w = w @ m, or w.copy_(w @ m) under no_grad() to keep the leaf"
        )

    def add_(self, other: Any, alpha: Any = None) -> Any:
        """`self += alpha * other` in place (under no_grad for a tensor that requires grad)."""
        return self._inplace("add_()", np.add, other, alpha)

    def sub_(self, other: Any, alpha: Any = None) -> Any:
        """`self -= alpha * other` in place."""
        return self._inplace("sub_()", np.subtract, other, alpha)

    def mul_(self, other: Any) -> Any:
        """`self *= other` in place."""
        return self._inplace("mul_()", np.multiply, other)

    def div_(self, other: Any) -> Any:
        """`self /= other` in place."""
        return self._inplace("div_()", np.true_divide, other)

    def zero_(self) -> Any:
        """Set every element to 0, in place."""
        return self._overwrite("zero_()", 0)

    def fill_(self, value: Any) -> Any:
        """Set every element to the number `value`, in place."""
        if np.ndim(value) != 0:
            raise ValueError(
                f"fill_(): the value must be a number or a 0-d tensor, got shape "
                f"{np.shape(value)}; use copy_() to copy an array in"
            )
        return self._overwrite("fill_()", value)

    def copy_(self, source: Any) -> Any:
        """Copy `source` (broadcast to this tensor's shape, cast to its dtype) in, in place."""
        return self._overwrite("copy_()", source)

    def _apply_(self, op: str, fn: Any, *args: Any, instead: str) -> Any:
        """The in-place forms of functions (`relu_`, `clamp_`, `masked_fill_`, ...):
        `fn(self, *args)` computed as usual, recording nothing, then written in by `_write`
        (a tensor of a graph is refused first, with `instead` as the fix)."""
        _check_may_write(self, op, args[-1] if args else None, instead)
        with no_grad():
            value = fn(self, *args).data
        if not np.can_cast(value.dtype, self._data.dtype, casting="same_kind"):
            raise TypeError(
                f"{op}: the result is {value.dtype}, which cannot be written into the "
                f"{self._data.dtype} tensor in place; compute a new tensor instead ({instead})"
            )
        return self._write(op, value, casting="same_kind")

    def relu_(self) -> Any:
        """max(x, 0) in place (for a tensor of a graph, write x = x.relu())."""
        return self._apply_("relu_()", _tensor.Tensor.relu, instead="x = x.relu()")

    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002  (PyTorch's names)
        """Clip to [min, max] in place (for a tensor of a graph, write x = x.clamp(...))."""
        return self._apply_(
            "clamp_()", _tensor.Tensor.clamp, min, max, instead="x = x.clamp(min, max)"
        )

    def masked_fill_(self, mask: Any, value: Any) -> Any:
        """Write `value` where `mask` is True, in place (for a tensor of a graph, write
        x = x.masked_fill(mask, value))."""
        return self._apply_(
            "masked_fill_()",
            _tensor.Tensor.masked_fill,
            mask,
            value,
            instead="x = x.masked_fill(mask, value)",
        )

    def exp_(self) -> Any:
        """exp(x) in place (for a tensor of a graph, write x = x.exp())."""
        return self._apply_("exp_()", _tensor.Tensor.exp, instead="x = x.exp()")

    def tanh_(self) -> Any:
        """tanh(x) in place (for a tensor of a graph, write x = x.tanh())."""
        return self._apply_("tanh_()", _tensor.Tensor.tanh, instead="x = x.tanh()")

    def sigmoid_(self) -> Any:
        """sigmoid(x) in place (for a tensor of a graph, write x = x.sigmoid())."""
        return self._apply_("sigmoid_()", _tensor.Tensor.sigmoid, instead="x = x.sigmoid()")

    def neg_(self) -> Any:
        """-x in place (for a tensor of a graph, write x = -x)."""
        return self._apply_("neg_()", _tensor.Tensor.neg, instead="x = -x")

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> Any:
        """Fill with samples of N(mean, std^2) from the global generator, in place (PyTorch's
        initialiser spelling: `w.normal_(0, 0.02)` under `no_grad`, or `nn.init.normal_`)."""
        return self._overwrite("normal_()", get_rng().normal(mean, std, self.shape))

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> Any:
        """Fill with samples of U(a, b) from the global generator, in place."""
        return self._overwrite("uniform_()", get_rng().uniform(a, b, self.shape))

    # ---------------------------------------------------------------------- pickling
    def __getstate__(self) -> dict:
        hooks = len(self._hooks or ()) + len(self.grad_fn.output_hooks if self.grad_fn else ())
        if hooks:
            warnings.warn(
                f"pickling {_describe(self)}: its {hooks} hook(s) from register_hook() are not "
                "pickled (functions often cannot be); register them again after loading",
                UserWarning,
                stacklevel=2,
            )
        return {
            "data": self._data,
            "requires_grad": self.requires_grad,
            "name": self._name,
            "grad": self._grad,
        }

    def __setstate__(self, state: dict) -> None:
        # NumPy unpickles large arrays onto read-only bytes; a tensor must own writable memory
        # (in-place updates, and the lock that makes saved arrays read-only and writable again).
        data, grad = state["data"], state["grad"]
        self._data = data if data.flags.writeable and data.flags.owndata else data.copy()
        if grad is not None and not (grad.flags.writeable and grad.flags.owndata):
            grad = grad.copy()
        self._grad = grad
        self.requires_grad = bool(state["requires_grad"])
        self._name = state["name"]
