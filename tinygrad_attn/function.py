"""Function: the graph node, and the ONLY place graph nodes are made.

A built-in op and a user's op are written the same way: a subclass of `Function` with two
static methods, `forward(ctx, *arrays, **params) -> ndarray` and `backward(ctx, grad_out) ->
tuple`. `Op.apply(*tensors, **params)` runs `forward` on the tensors' arrays and, when a gradient
is wanted, records the node: the node *is* the ctx, so in a debugger `ctx.inputs`,
`ctx.saved_tensors` and the op's own attributes (`ctx.axis`, ...) are all on one object.

This module must not do calculus (ops do), walk the graph (the engine does) or accumulate
gradients (only the engine does).
"""

from __future__ import annotations

import collections
import weakref
from itertools import repeat
from typing import TYPE_CHECKING, Any

import numpy as np

from . import versions
from .state import grad_mode, observers

if TYPE_CHECKING:
    from .tensor import ReleasedTensor, Tensor

# Nodes are numbered as they are made. An op's inputs exist before it does, so every node has a
# larger number than the nodes that made its inputs: the engine runs backward from the largest
# number down, which is a topological order with no sort (PyTorch numbers its nodes the same way).
# In-place writes are stamped from the same counter (versions.py).
_sequence = versions.sequence

# The attributes of a node that belong to the framework. Everything else a forward sets on ctx
# (`ctx.axis = ...`) is the op's own parameter: see `Function.params()`. A forward that sets one
# of these names is refused, naming the op.
FRAMEWORK_FIELDS = frozenset(
    "parents needs_input_grad sequence output_ref grad_like output_shape output_dtype output_name"
    " output_hooks retains_output_grad watched scope creation_site inputs output saved_tensors"
    " released recorded name inplace is_view saved_as tensor_backward made_by".split()
)


class _FrameworkProperty(property):
    """A read-only property of every node; assigning it in a forward says what went wrong."""

    def __set__(self, ctx: Any, value: Any) -> None:
        raise AttributeError(_reserved_message(ctx, self.fget.__name__))


class Function:
    """Base class of every op; an instance is one node of the graph (and the op's ctx).

    Subclass it with static `forward(ctx, *arrays, **params)` and `backward(ctx, grad_out)`
    and call `MyOp.apply(*tensors, **params)`. What a node keeps (`FRAMEWORK_FIELDS`):

    - `parents`: one entry per input, in order (`x * x` has two edges to `x`): the `Function`
      that made an intermediate, the tensor itself for a leaf (so the graph holds an
      intermediate's array only if an op saved it, as PyTorch);
    - `inputs`: the input tensors: live, or (once gone) a `ReleasedTensor`, data-less;
    - `needs_input_grad`: one bool per input, set before forward (as in PyTorch, so a forward
      saves only what the needed gradients use); `sequence`: the node's number (`_sequence`);
    - `saved_tensors`: what forward saved with `save_for_backward` (freed after backward);
    - `output`: the tensor it made (or its data-less record), `output_shape`, `output_dtype`
      (together `grad_like`: what the gradient arriving here must be), `output_name`;
    - `creation_site`: "file:line" of the user's code (recorded in anomaly/debug mode);
    - `scope`: the module path being called when the node was made (e.g. "attn.query");
    - `output_hooks`, `retains_output_grad`: what `register_hook` and `retain_grad` asked for;
      `watched`: the engine looks closer (for those).
    - `inplace`: the in-place method that made this node (`"mul_"`), None for an ordinary op: the
      node then stands for a tensor changed in place (inplace.py), and pictures say so.
    - `made_by`: "Softmax.backward" (or "accumulate") for a node a backward pass made with
      `create_graph=True`: an op of the gradient's graph, not of the program's; None otherwise.
    """

    creation_site: str | None = None
    scope: str | None = None
    output_name: str | None = None
    output_hooks: tuple = ()
    retains_output_grad = False
    watched = False  # hooks, retain_grad: the engine looks closer
    inplace: str | None = None
    made_by: str | None = None
    saved_as: tuple | None = None  # for backward_graph: each saved array's role (higher_order.py)
    tensor_backward = False  # a user's backward written with Tensor ops (higher_order.py)
    sequence = 1 << 62  # (a recorded node's number replaces it; a bare ctx is never "written")
    is_view = False  # an op whose result shares its input's memory (reshape, transpose, a[i])
    _saved: tuple | None = ()  # None once released

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The package's own ops are known not to set framework names and to return one gradient
        # per input (their tests check both); a user's op is checked, forward and backward.
        cls._checks_fields = not cls.__module__.startswith(__package__ + ".")

    @staticmethod
    def forward(ctx: Function, *arrays: np.ndarray, **params: Any) -> np.ndarray:
        raise NotImplementedError("a Function subclass must define forward(ctx, *arrays)")

    @staticmethod
    def backward(ctx: Function, grad_out: np.ndarray) -> tuple:
        raise NotImplementedError("a Function subclass must define backward(ctx, grad_out)")

    @staticmethod
    def backward_graph(ctx: Function, grad_out: Any) -> tuple:
        """The gradient as recorded Tensor ops, for `backward(create_graph=True)`: by default
        `backward` itself, run on Tensors (higher_order.py says when that works)."""
        return _higher_order.run_backward_on_tensors(ctx, grad_out)

    @_FrameworkProperty
    def name(self) -> str:
        """The op's name: its class name (the label in graphs and error messages)."""
        return type(self).__name__

    def save_for_backward(self, *arrays: Any) -> None:
        """Keep `arrays` for backward, until the graph is released. (When no graph is recorded,
        the ctx and what it saved are dropped with the result.)"""
        self._saved = arrays

    @_FrameworkProperty
    def saved_tensors(self) -> tuple:
        """The arrays forward saved (named as in PyTorch, though they are ndarrays). Reading
        them checks that none was changed in place since (versions.py)."""
        if self._saved is not None and versions.last_write < self.sequence:  # (no write since)
            return self._saved
        if self._saved is None:
            return self._freed()
        versions.check_saved(self, self._saved)  # some in-place write came after this node
        return self._saved

    def _freed(self) -> tuple:
        raise RuntimeError(
            f"{self.name}: the arrays it saved for backward were freed by an earlier "
            "backward() (the graph was already released). Pass retain_graph=True to the "
            "first backward() to run backward through this graph again."
        )

    @_FrameworkProperty
    def recorded(self) -> bool:
        """True for a node of a graph; False for the ctx of an op run without one."""
        return "parents" in self.__dict__

    @_FrameworkProperty
    def released(self) -> bool:
        """True once backward (or `Function.release`) freed what this node saved."""
        return self._saved is None

    def params(self) -> dict:
        """The op's own parameters: what its forward set on ctx (`axis`, `shape`, ...)."""
        return {
            k: v
            for k, v in vars(self).items()
            if not k.startswith("_") and k not in FRAMEWORK_FIELDS
        }

    @classmethod
    def apply(cls, *inputs: Any, **params: Any) -> Tensor:
        """Run `forward` on the inputs' arrays; record a node if any input requires grad."""
        arrays, needs, parents = [], [], []  # one pass (a loop: cheapest here)
        try:
            for t in inputs:
                arrays.append(t._data)
                needs.append(t.requires_grad)
                parents.append(t.grad_fn or t)  # the node that made it, or the leaf itself
        except AttributeError:  # a user's op may pass Python numbers or ndarrays
            return cls.apply(*[_tensor.as_constant(t) for t in inputs], **params)
        ctx = cls.__new__(cls)
        ctx.needs_input_grad = tuple(needs)  # (read by forwards that save only what is needed)
        try:
            out = cls.forward(ctx, *arrays, **params)
        except ValueError as error:  # NumPy's broadcast error, said with the op's name
            _explain_broadcast(cls, arrays, error)
            raise
        if out.__class__ is not np.ndarray:
            out = _as_result(cls, out)
        if cls._checks_fields:  # a user's op (the package's own ops pass these checks: tests)
            _checked_forward(ctx, arrays, out)
        result = _tensor.Tensor.__new__(_tensor.Tensor)
        result._data = out
        if out.base is not None or cls._checks_fields:  # a view of an input, or of a buffer
            out = _inplace.settle_view(cls, result, inputs, params)
        if True in needs and grad_mode.enabled:  # make ctx a node, linked to parents and output
            ctx.parents = tuple(parents)
            ctx.sequence = next(_sequence)
            ctx.output_ref = weakref.ref(result)
            ctx.grad_like = (out.shape, out.dtype)
            result.requires_grad = True
            result.grad_fn = ctx
        if observers.active:  # module scopes, anomaly mode, op logging: one flag when off
            _observe(ctx, inputs, result)
        return result

    @_FrameworkProperty
    def output_shape(self) -> tuple:
        """The shape of the output (and of the gradient that arrives at this node)."""
        return self.grad_like[0]

    @_FrameworkProperty
    def output_dtype(self) -> np.dtype:
        return self.grad_like[1]

    @_FrameworkProperty
    def inputs(self) -> tuple:
        """The input tensors, in order (a `ReleasedTensor` for an intermediate that is gone)."""
        return tuple(p.output if isinstance(p, Function) else p for p in self.parents)

    @_FrameworkProperty
    def output(self) -> Tensor | ReleasedTensor:
        """The tensor this node made, or (once it is gone) what the graph keeps of it."""
        tensor = self.output_ref()
        return tensor if tensor is not None else self.released_output()

    def released_output(self) -> ReleasedTensor:
        """The data-less record of this node's output that a released graph keeps."""
        record = self.__dict__.get("_released_output")
        if record is None:
            tensor = self.output_ref()
            name = tensor.name if tensor is not None else self.output_name
            record = _tensor.ReleasedTensor(self.output_shape, self.output_dtype, name, self)
            self._released_output = record
        return record

    @staticmethod
    def release(nodes: list | tuple) -> None:
        """Free what these nodes saved (`_saved = None`, in one C-level pass; their structure
        stays)."""
        collections.deque(map(setattr, nodes, repeat("_saved"), repeat(None)), maxlen=0)

    def __repr__(self) -> str:
        if not self.recorded:
            return f"<{self.name} (not recorded)>"
        shapes = ", ".join(str(tuple(t.shape)) for t in self.inputs)
        return f"<{self.name} node: ({shapes}) -> {tuple(self.output_shape)}>"


def _observe(ctx: Function, inputs: tuple, result: Tensor) -> None:
    """What is watched at each forward: the module being called, the creation site, callbacks."""
    if result.grad_fn is ctx:  # a node of the graph: the module it was made in, and where
        ctx.scope = observers.scope[-1] if observers.scope else None
        if observers.record_sites:
            ctx.creation_site = observers.site_finder()
        if observers.made_by:  # (made by a backward pass that records its ops)
            ctx.made_by = observers.made_by
    for callback in observers.on_forward:
        callback(ctx, inputs, result)


def _checked_forward(ctx: Function, arrays: list, out: np.ndarray) -> None:
    """A user's op's forward: no framework name set on ctx (`needs_input_grad` is given); a
    Tensor-written backward learns what it saved (higher_order.py)."""
    if not _GIVEN.issuperset(ctx.__dict__.keys() & FRAMEWORK_FIELDS):
        name = sorted(FRAMEWORK_FIELDS.intersection(ctx.__dict__) - _GIVEN)[0]
        raise AttributeError(_reserved_message(ctx, name))
    if ctx.tensor_backward:
        _higher_order.record_roles(ctx, arrays, out)
        ctx.watched = True  # (the engine hands its backward Tensors: watched_backward)


_GIVEN = frozenset({"needs_input_grad"})  # what apply sets on ctx before forward


def _as_result(op: type, out: Any) -> np.ndarray:
    """A forward's result as a numeric ndarray, or an error that names the op."""
    if out is None:
        raise TypeError(f"{op.__name__}.forward returned None, not an ndarray: forgot `return`?")
    array = np.asarray(out)
    if array.dtype.kind not in "fiub":
        raise TypeError(
            f"{op.__name__}.forward returned {type(out).__name__} data of dtype {array.dtype}; "
            "a forward must return a float, integer or bool ndarray."
        )
    return array


def _explain_broadcast(op: type, arrays: list, error: ValueError) -> None:
    """Raise the readable error when `error` is NumPy's "could not be broadcast" for inputs
    whose shapes do not broadcast (`broadcast_shape` in ops/_util.py words it: the op and the
    shapes)."""
    if "could not be broadcast" in str(error) and len(arrays) > 1:
        from .ops._util import broadcast_shape  # (ops import this module: not at the top)

        broadcast_shape(op.__name__, *[a.shape for a in arrays])


def _reserved_message(ctx: Function, name: str) -> str:
    return (
        f"{type(ctx).__name__}.forward set ctx.{name}, but `{name}` is the framework's (the "
        f"engine and the graph read it). Give the op's own value another name, e.g. ctx.my_{name};"
        f" reserved names: {', '.join(sorted(FRAMEWORK_FIELDS))}."
    )


# The one import cycle: tensor.py's methods call the ops, the ops subclass Function, and
# Function makes Tensors. Imported once Function exists, so that any module may come first.
from . import tensor as _tensor  # noqa: E402, I001  (first: it imports inplace)
from . import inplace as _inplace  # noqa: E402
from . import higher_order as _higher_order  # noqa: E402
