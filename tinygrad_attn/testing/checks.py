"""`check_gradients`: what a user puts in their own pytest suite for a `Function` they wrote.

`check_gradients(MyOp, (3, 4), (4,))` draws float64 inputs of the given shapes (or takes the
arrays given), runs `gradcheck`, optionally compares the forward with a NumPy reference, and
raises an `AssertionError` whose message starts with the call that reproduces the failure.

It needs neither hypothesis nor the op tables. It checks; it must not change the graph or any op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autograd.gradcheck import GradcheckError, gradcheck
from ..function import Function
from ..tensor import Tensor


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(
        isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in value
    )


def _op_name(op: Any) -> str:
    return getattr(op, "__qualname__", None) or getattr(op, "__name__", None) or repr(op)


def _describe(value: Any) -> str:
    if _is_shape(value):
        return str(tuple(int(n) for n in value))
    if isinstance(value, (Tensor, np.ndarray)):
        return f"<{type(value).__name__} {tuple(value.shape)} {value.dtype}>"
    return repr(value)


def _make_inputs(
    inputs: Sequence[Any],
    rng: np.random.Generator,
    low: float,
    high: float,
    requires_grad: Sequence[bool],
) -> list:
    """Shapes become float64 Tensors drawn from [low, high]; float arrays become Tensors;
    Tensors are used as they are; anything else (integer or bool arrays, numbers) is passed
    through as a constant."""
    made = []
    for value, grad in zip(inputs, requires_grad):
        if _is_shape(value):
            array = rng.uniform(low, high, tuple(value))
            made.append(Tensor(array, dtype=np.float64, requires_grad=grad))
        elif isinstance(value, Tensor):
            made.append(value)
        elif isinstance(value, (np.ndarray, list)):
            array = np.asarray(value)
            if array.dtype.kind == "f" and isinstance(value, list):
                array = array.astype(np.float64)  # a list carries no dtype: check in float64
            made.append(Tensor(array, requires_grad=grad) if array.dtype.kind == "f" else array)
        else:
            made.append(value)
    return made


def check_gradients(
    op: type[Function] | Callable[..., Any],
    *inputs: Any,
    params: dict | None = None,
    seed: int | np.random.Generator | None = 0,
    low: float = -2.0,
    high: float = 2.0,
    requires_grad: bool | Sequence[bool] = True,
    reference: Callable[..., Any] | None = None,
    trials: int = 1,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
) -> bool:
    """Check the gradients of a `Function` subclass or of a function of Tensors.

    `op` is a `Function` subclass (called as `op.apply(*inputs, **params)`) or any callable
    returning Tensors (called as `op(*inputs, **params)`). Each of `inputs` is one of:

    - a shape, as a tuple of ints (`(3, 4)`, `()`): float64 values drawn uniformly from
      `[low, high]` with `seed`, as a Tensor that requires grad;
    - a float array or list: a Tensor that requires grad (float32 arrays are checked on a
      float64 copy, with a warning);
    - a Tensor: used as it is;
    - anything else (integer or bool arrays, numbers): passed unchanged, as a constant.

    `requires_grad` (one bool, or one per input) says which float inputs are checked.
    `reference(*arrays, **params)`, if given, is a NumPy forward the output must match.
    `trials` repeats the check with fresh values for the sampled shapes. Returns True;
    on failure raises `GradcheckError` (an `AssertionError`, so pytest shows the message) —
    or returns False with `raise_exception=False`.

        check_gradients(MyOp, (3, 4), (4,))            # two sampled inputs
        check_gradients(MyOp, (2, 5), params={"axis": 1}, low=0.5, high=2.0)
    """
    params = dict(params or {})
    if isinstance(op, type) and issubclass(op, Function):
        op_class = op

        def fn(*xs: Any) -> Any:
            return op_class.apply(*xs, **params)

    elif callable(op):

        def fn(*xs: Any) -> Any:
            return op(*xs, **params)

    else:
        raise TypeError(
            f"check_gradients: op must be a Function subclass or a callable, got "
            f"{type(op).__name__}"
        )
    if isinstance(requires_grad, bool):
        grads = [requires_grad] * len(inputs)
    else:
        grads = [bool(g) for g in requires_grad]
        if len(grads) != len(inputs):
            raise ValueError(
                f"check_gradients: requires_grad has {len(grads)} entries for {len(inputs)} "
                "inputs; give one bool, or one per input"
            )
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    call = f"check_gradients({_op_name(op)}, {', '.join(_describe(v) for v in inputs)}"
    call += f", seed={seed!r})" if not isinstance(seed, np.random.Generator) else ")"

    for trial in range(trials):
        made = _make_inputs(inputs, rng, low, high, grads)
        where = call + (f", trial {trial + 1} of {trials}" if trials > 1 else "")
        problem = None if reference is None else _forward_problem(fn, made, reference, params)
        if problem is not None:
            if raise_exception:
                raise GradcheckError(f"{where}: {problem}")
            return False
        try:
            if not gradcheck(fn, made, eps, atol, rtol, raise_exception=raise_exception):
                return False
        except GradcheckError as err:
            raise GradcheckError(f"{where}:\n{err}", err.mismatches) from None
    return True


def _forward_problem(fn: Callable, made: list, reference: Callable, params: dict) -> str | None:
    """How the forward disagrees with the NumPy reference, or None when it agrees."""
    out = fn(*made)
    got = out._data if isinstance(out, Tensor) else np.asarray(out)
    arrays = [v._data if isinstance(v, Tensor) else v for v in made]
    expected = np.asarray(reference(*arrays, **params))
    if got.shape != expected.shape:
        return f"the forward gives shape {got.shape}, the reference {expected.shape}"
    wrong = ~np.isclose(got, expected, rtol=1e-7, atol=1e-10)
    if not wrong.any():
        return None
    worst = np.unravel_index(int(np.argmax(np.where(wrong, np.abs(got - expected), -1))), got.shape)
    return (
        f"the forward disagrees with the reference at {int(wrong.sum())} of {got.size} "
        f"elements; worst at {[int(i) for i in worst]}: {got[worst]:.6g} vs "
        f"{expected[worst]:.6g}"
    )
