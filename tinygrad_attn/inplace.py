"""A tensor's data: made from user values (`Tensor(data)`), read and replaced through `.data`,
changed in place (`add_`, `x[i] = v`, `+=`, ...), and pickled.

`Tensor` inherits these from `InPlaceMixin`. They follow PyTorch's rules:

- `t.data` is a new tensor sharing `t`'s memory, outside the graph (`p.data.add_(g, alpha=-lr)`
  updates `p`); `t.data = value` replaces the memory (its shape and dtype may change; `.grad`
  must still match, so a new shape needs `.grad = None` first).
- Every in-place op comes to `modify`, the one place a tensor is changed in place. It writes
  into the tensor's own memory, so every view of it (a slice, a reshape, a transpose) and the
  tensor it views see the change, and it raises the memory's version (versions.py), so a
  backward that would read a saved array changed since is refused, naming the op.
- When the change must be part of a graph (grad mode on, and the tensor or the value requires
  grad) it is also recorded: the out-of-place op computes the new value, with its node, and the
  tensor moves onto that node (`y.mul_(2)` then has grad_fn Mul, marked `inplace="mul_"`). A
  write into a view (`y[:, 0].mul_(2)`, `y[0] = v`) gives the tensor it views a `CopySlices`
  node, and every live view of that tensor is re-derived from the new node, as PyTorch does.
- Refused, as in PyTorch: an in-place change of a leaf that requires grad (or a view of one)
  with grad mode on (`with ta.no_grad():` is how parameters are updated); writing into an
  expanded tensor, whose elements share memory; a result that cannot be cast to the tensor's
  dtype (`int_tensor += 0.5`).
- Pickling keeps the data, requires_grad, name and grad; a tensor made by an op pickles as a
  leaf with its data, as in PyTorch.

This module must not compute gradients itself: the values come from the ordinary ops (and the
write ops in ops/writes.py), the write from NumPy.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from . import ops, versions
from . import tensor as _tensor  # (tensor.py imports this module first; names are read late)
from .errors import DTypeError, ShapeError
from .state import get_default_dtype, get_rng, grad_mode, no_grad


def _label(t: Any) -> str:
    return f" {t._name!r}" if t._name else ""


def _describe(t: Any) -> str:
    return f"tensor{_label(t)} (shape {t._data.shape}, {t._data.dtype})"


def _numeric(value: Any, where: str) -> np.ndarray:
    """`value` as an ndarray (a Tensor gives its array), or a TypeError unless it is numeric."""
    if isinstance(value, _tensor.Tensor):
        return value._data
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
        data = data._data
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
        if not array.dtype.isnative:  # (a big-endian file's array: computed in native order)
            array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype.kind not in "fiub":
        raise TypeError(
            f"Tensor: {type(data).__name__} data (NumPy reads it as dtype {array.dtype}) is not "
            "numeric; tinygrad_attn holds float, integer or bool arrays. Convert it first, "
            "e.g. np.asarray(data, dtype=np.float32)."
        )
    return array


def _check_can_require_grad(dtype: np.dtype, where: str) -> None:
    if dtype.kind != "f":
        raise DTypeError(
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
    if array.dtype != old.dtype and (t.requires_grad or t._grad is not None):
        if t.grad_fn is not None or array.dtype.kind != "f":
            array = array.astype(old.dtype)  # a node keeps its dtype; a parameter stays float
        elif t._grad is not None:  # a float dtype change (`.to(torch.float64)`)
            t._grad = _tensor.Tensor._make(t._grad._data.astype(array.dtype))
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


# ------------------------------------------------------------------ the one in-place write
def modify(t: Any, op: str, compute: Callable[[Any], Any], value: Any = None) -> Any:
    """THE place a tensor is changed in place: `t`'s memory gets `compute(t)` (the out-of-place
    result, a Tensor), its version goes up, and, when a graph must see the change, `t` moves
    onto the node that computed it (see the module docstring). `value` is the other operand, if
    any (whether it requires grad decides, with `t`'s, if the change is recorded). Returns t."""
    _check_writable(t, op)
    record = grad_mode.enabled and (
        t.requires_grad or (isinstance(value, _tensor.Tensor) and value.requires_grad)
    )
    if not record:
        with no_grad():
            new = compute(t)
        _store(t, op, new._data)
        return t
    root = t._base if t._base is not None and t._view_chain is not None else None
    _check_recordable(t, op, t if root is None else root)
    since = next(versions.sequence)  # (the nodes `compute` makes are numbered after this)
    new = compute(t)
    _fits(op, t, new._data)
    if new.grad_fn is not None:  # what they saved of t's memory must outlive the write below
        _separate_saved(new.grad_fn, t._data, since)
    if root is None:
        _store(t, op, new._data)
        _take_over(t, new.grad_fn, op)
        return t
    before = _tensor.Tensor._make(root._data)  # the root as it was: its node, its grad flag
    before.grad_fn, before.requires_grad, before._name = (
        root.grad_fn,
        root.requires_grad,
        root._name,
    )
    written = ops.CopySlices.apply(before, new, region=t._data, chain=t._view_chain)
    versions.bump(root._data)
    _take_over(root, written.grad_fn, op)
    _rebase_views(root)
    return t


def _check_writable(t: Any, op: str) -> None:
    if not t._data.flags.writeable:
        if t._base is not None and 0 in t._data.strides and t._data.size > 1:
            raise RuntimeError(
                f"{op}: {_describe(t)} is an expanded view: several of its elements are one "
                "memory location, so an in-place write would land there several times. Clone "
                "it first (t = t.clone()) and change the clone."
            )
        raise ValueError(
            f"{op}: {_describe(t)} holds a read-only NumPy array (NumPy made it so, or you did: "
            "a broadcast view, np.frombuffer, arr.setflags(write=False)), so it cannot be "
            "changed in place. Copy it first: t = t.clone(), or ta.tensor(array)."
        )


def _check_recordable(t: Any, op: str, root: Any) -> None:
    """PyTorch's refusals of a recorded in-place change: a leaf that requires grad, or a view
    of one (its `.grad` would be for a value that no longer exists)."""
    if root.grad_fn is None and root.requires_grad:
        what = "the leaf" if root is t else "a view of the leaf"
        raise RuntimeError(
            f"{op}: in-place change of {what}{_label(root)} (shape {root._data.shape}), which "
            "requires grad, outside no_grad(): a leaf that requires grad is being used in an "
            "in-place operation, and its gradient would be for a value that no longer exists. "
            "Update parameters inside `with ta.no_grad():` (as an optimizer does), or compute "
            "a new tensor (w2 = w - 1)."
        )


def _fits(op: str, t: Any, values: np.ndarray) -> None:
    """The computed values must have t's shape and a dtype t can hold."""
    if values.shape != t._data.shape:
        raise ShapeError(
            f"{op}: the result has shape {values.shape}, which does not fit {_describe(t)} in "
            "place; in place, the other operand must broadcast to the tensor's shape without "
            "enlarging it"
        )
    if not np.can_cast(values.dtype, t._data.dtype, casting="same_kind"):
        raise DTypeError(
            f"{op}: the result type {values.dtype} cannot be cast to the dtype of "
            f"{_describe(t)}, which an in-place op keeps; compute a new tensor instead "
            f"(y = x.{op.rstrip('_()')}(...)), or convert the tensor first (x = x.float())"
        )


def _store(t: Any, op: str, values: np.ndarray) -> None:
    """Copy `values` into t's memory (shape and dtype checked) and raise its version."""
    if values is not t._data:
        _fits(op, t, values)
        np.copyto(t._data, values, casting="same_kind")
    versions.bump(t._data)


def _separate_saved(node: Any, memory: np.ndarray, since: int) -> None:
    """The nodes that computed the new value (`node` and those before it numbered after `since`)
    may have saved `memory` itself (Mul saves its inputs; selu's Elu its input): give them a
    copy, since the write that follows changes that memory after they were made."""
    base = versions.owner(memory)
    todo, seen = [node], set()
    while todo:
        node = todo.pop()
        if getattr(node, "sequence", 0) <= since or id(node) in seen:
            continue  # (a leaf, or a node made before the change: not this computation's)
        seen.add(id(node))
        todo.extend(node.parents)
        saved = node._saved
        if saved and any(isinstance(a, np.ndarray) and versions.owner(a) is base for a in saved):
            node._saved = tuple(
                a.copy() if isinstance(a, np.ndarray) and versions.owner(a) is base else a
                for a in saved
            )


def _no_output() -> None:
    """What a node's output reference gives once its tensor moved on to an in-place node."""
    return None


def _take_over(t: Any, node: Any, op: str) -> None:
    """`t` now stands for the result of `node` (the in-place change just recorded)."""
    old = t.grad_fn
    if old is not None:
        old.output_name = t._name
        old.output_ref = _no_output  # (its output, in pictures: the value before the change)
        old.overwritten_by = node  # (what replaced its output in memory: versions.py says so)
    node.output_ref = weakref.ref(t)
    node.output_name = t._name
    node.inplace = op
    t.grad_fn = node
    t.requires_grad = True


def _rebase_views(root: Any) -> None:
    """Every live view of `root` gets its node again, from root's new node (PyTorch does this
    when the view is next used): the view ops of its chain, applied to root."""
    alive = []
    for ref in list(root._views or ()):  # (a copy: the replays below register views too)
        view = ref()
        if view is None or view._view_chain is None:
            continue
        alive.append(ref)
        current = root
        for op, params in view._view_chain:
            current = op.apply(current, **params)
        _move_node(view, current.grad_fn)
    root._views = alive


def _move_node(view: Any, node: Any) -> None:
    if node is not None:
        node.output_ref = weakref.ref(view)
        node.output_name = view._name
        view.grad_fn = node
        view.requires_grad = True


def settle_view(op: type, result: Any, inputs: tuple, params: dict) -> np.ndarray:
    """For an op's result whose array views another: if it shares an input's memory, a view op
    (`op.is_view`) makes it a view of that input's base (so in-place writes through it are
    recorded against the base); any other op gets a copy, so that its result never shares an
    input's memory. Returns the result's array."""
    out = result._data
    memory = versions.owner(out)
    for t in inputs:
        if versions.owner(t._data) is not memory:
            continue
        if not (op.is_view and t is inputs[0]):
            out = result._data = out.copy()  # (a non-view op's result owns its memory)
            return out
        base = t._base if t._base is not None else t
        result._base = base
        chain = t._view_chain
        result._view_chain = None if chain is None else (*chain, (op, params))
        if base.grad_fn is not None or not base.requires_grad:  # (a leaf that requires grad
            _register_view(base, result)  # cannot be changed in place with a graph: no rebase)
        return out
    return out


def _register_view(base: Any, view: Any) -> None:
    """Note `view` among `base`'s live views (for `_rebase_views`); dead entries are dropped
    whenever the list has doubled, so a long-lived base viewed at every step stays small."""
    views = base._views
    if views is None:
        base._views = [weakref.ref(view)]
        return
    views.append(weakref.ref(view))
    if len(views) >= 16 and not len(views) & (len(views) - 1):  # 16, 32, 64, ...: prune
        views[:] = [ref for ref in views if ref() is not None]


def _operand(t: Any, value: Any, alpha: Any, op: str) -> Any:
    """The other operand of an arithmetic in-place op as a tensor or number (`alpha * value`)."""
    if not isinstance(value, (_tensor.Tensor, bool, int, float)):
        value = _numeric(value, op)
    if alpha is not None and alpha != 1:
        value = value * alpha
    return value


class InPlaceMixin:
    """`.data`, the in-place ops and pickling for `Tensor` (see the module docstring)."""

    _data: Any = None

    def _get_data(self) -> Any:
        return _tensor.Tensor._make(self._data)

    def _set_data(self, value: Any) -> None:
        self._data = _new_data(self, value)

    data = property(
        _get_data,
        _set_data,
        doc="A tensor sharing this one's memory, outside the graph (PyTorch's `.data`); "
        "assigning replaces the memory. The ndarray itself is `.numpy()`.",
    )

    # ------------------------------------------------------------------ in-place ops
    def add_(self, other: Any, *, alpha: Any = None) -> Any:
        """`self += alpha * other` in place."""
        value = _operand(self, other, alpha, "add_()")
        return modify(self, "add_()", lambda t: t + value, value)

    def sub_(self, other: Any, *, alpha: Any = None) -> Any:
        """`self -= alpha * other` in place."""
        value = _operand(self, other, alpha, "sub_()")
        return modify(self, "sub_()", lambda t: t - value, value)

    def mul_(self, other: Any) -> Any:
        """`self *= other` in place."""
        value = _operand(self, other, None, "mul_()")
        return modify(self, "mul_()", lambda t: t * value, value)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Any:
        """`self /= other` in place."""
        value = _operand(self, other, None, "div_()")
        return modify(self, "div_()", lambda t: t.div(value, rounding_mode=rounding_mode), value)

    def __ifloordiv__(self, other: Any) -> Any:
        return modify(self, "floor_divide_()", lambda t: t // other, other)

    def __imod__(self, other: Any) -> Any:
        return modify(self, "remainder_()", lambda t: t % other, other)

    def pow_(self, exponent: Any) -> Any:
        """`self **= exponent` in place."""
        value = _operand(self, exponent, None, "pow_()")
        return modify(self, "pow_()", lambda t: t**value, value)

    def __iadd__(self, other: Any) -> Any:
        return self.add_(other)

    def __isub__(self, other: Any) -> Any:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Any:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Any:
        return self.div_(other)

    def __ipow__(self, other: Any) -> Any:
        return self.pow_(other)

    def __imatmul__(self, other: Any) -> Any:
        """`w @= m`: in place when the product keeps w's shape (as in PyTorch)."""
        return modify(self, "@=", lambda t: t @ other, other)

    def zero_(self) -> Any:
        """Set every element to 0, in place."""
        return self.fill_(0)

    def fill_(self, value: Any) -> Any:
        """Set every element to `value` (a number or a 0-d tensor), in place."""
        if np.ndim(value) != 0:
            raise ShapeError(
                f"fill_(): the value must be a number or a 0-d tensor, got shape "
                f"{np.shape(value)}; use copy_() to copy an array in"
            )
        return self._fill_from("fill_()", value)

    def copy_(self, src: Any, non_blocking: bool = False) -> Any:
        """Copy `src` (broadcast to this tensor's shape, cast to its dtype) in, in place."""
        return self._fill_from("copy_()", src)

    def _fill_from(self, op: str, src: Any) -> Any:
        """`copy_` and the fills written with it, each under its own name."""
        if not isinstance(src, _tensor.Tensor):
            src = _tensor.Tensor._make(_numeric(src, op))
        copy = ops.Copy.apply
        return modify(self, op, lambda t: copy(src, shape=t._data.shape, dtype=t._data.dtype), src)

    def relu_(self) -> Any:
        """max(x, 0) in place."""
        return modify(self, "relu_()", _tensor.Tensor.relu)

    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002  (PyTorch's names)
        """Clip to [min, max] in place."""
        return modify(self, "clamp_()", lambda t: t.clamp(min, max), _grad_operand(min, max))

    def clamp_min_(self, min: Any) -> Any:  # noqa: A002
        return self.clamp_(min=min)

    def clamp_max_(self, max: Any) -> Any:  # noqa: A002
        return self.clamp_(max=max)

    def masked_fill_(self, mask: Any, value: Any) -> Any:
        """Write `value` where `mask` is True, in place."""
        return modify(self, "masked_fill_()", lambda t: t.masked_fill(mask, value), value)

    def exp_(self) -> Any:
        return modify(self, "exp_()", _tensor.Tensor.exp)

    def log_(self) -> Any:
        return modify(self, "log_()", _tensor.Tensor.log)

    def sqrt_(self) -> Any:
        return modify(self, "sqrt_()", _tensor.Tensor.sqrt)

    def abs_(self) -> Any:
        return modify(self, "abs_()", _tensor.Tensor.abs)

    def tanh_(self) -> Any:
        return modify(self, "tanh_()", _tensor.Tensor.tanh)

    def sigmoid_(self) -> Any:
        return modify(self, "sigmoid_()", _tensor.Tensor.sigmoid)

    def neg_(self) -> Any:
        return modify(self, "neg_()", _tensor.Tensor.neg)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        """Fill with samples of N(mean, std^2) from the global generator, in place."""
        rng = get_rng() if generator is None else generator.rng
        return self._fill_from("normal_()", rng.normal(mean, std, self.shape))

    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Any:
        """Fill with samples of U(a, b) from the global generator, in place."""
        rng = get_rng() if generator is None else generator.rng
        return self._fill_from("uniform_()", rng.uniform(a, b, self.shape))

    def __setitem__(self, index: Any, value: Any) -> None:
        """`t[index] = value`, as PyTorch: written into t's memory (and its views'), recorded
        in the graph when t or the value requires grad (a slice: through the view, CopySlices;
        a mask or an index array: IndexPut)."""
        index = _tensor._plain_index(index)
        if not isinstance(value, _tensor.Tensor):
            value = _tensor.Tensor._make(_numeric(value, "item assignment"))
        if ops.movement._is_basic(index):  # a slice: written through the view it names
            self[index]._fill_from("t[...] = v", value)
        else:
            put = ops.IndexPut.apply
            modify(self, "t[...] = v", lambda t: put(t, value, index=index), value)

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
            "grad": None if self._grad is None else self._grad._data,
        }

    def __setstate__(self, state: dict) -> None:
        # NumPy unpickles large arrays onto read-only bytes; a tensor must own writable memory
        data, grad = state["data"], state["grad"]
        self._data = data if data.flags.writeable else data.copy()
        if grad is not None:
            grad = _tensor.Tensor._make(grad if grad.flags.writeable else grad.copy())
        self._grad = grad
        self.requires_grad = bool(state["requires_grad"])
        self._name = state["name"]


def _grad_operand(*values: Any) -> Any:
    """The first of `values` that is a tensor requiring grad (clamp's bounds), else None."""
    return next((v for v in values if isinstance(v, _tensor.Tensor) and v.requires_grad), None)
