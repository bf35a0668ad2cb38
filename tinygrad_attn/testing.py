"""Testing helpers for users' own ops: `check_gradients`, and hypothesis strategies.

`check_gradients(MyOp, (3, 4), (4,))` is what a user puts in their own pytest suite for a
`Function` they wrote: it draws float64 inputs of the given shapes (or takes the arrays given),
runs `gradcheck`, optionally compares the forward with a NumPy reference, and raises an
`AssertionError` whose message locates the error and names the likely bug.

The strategies (`arrays_in`, `broadcastable_arrays`, `op_samples`, `HypothesisChoices`) drive
the op registry's generators from hypothesis, so a failing property shrinks to a small case.
hypothesis is imported only when a strategy is asked for: `check_gradients` works without it.

This module checks and generates; it must not change the graph or any op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import op_registry
from .function import Function
from .gradcheck import GradcheckError, gradcheck
from .op_registry import Domain, Values
from .tensor import Tensor

# ------------------------------------------------------------------------ check_gradients


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
    got = out.data if isinstance(out, Tensor) else np.asarray(out)
    arrays = [v.data if isinstance(v, Tensor) else v for v in made]
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


# ------------------------------------------------------------------------ strategies


def _hypothesis() -> tuple:
    """(hypothesis.strategies, hypothesis.extra.numpy), or an ImportError saying what to do."""
    try:
        import hypothesis.extra.numpy as hnp
        import hypothesis.strategies as st
    except ImportError:
        raise ImportError(
            "tinygrad_attn.testing: the hypothesis strategies need hypothesis; install it with "
            "`pip install hypothesis` (or `pip install tinygrad-attn[test]`). check_gradients "
            "works without it."
        ) from None
    return st, hnp


def _domain(domain: Domain | str) -> Domain:
    if isinstance(domain, Domain):
        return domain
    try:
        return op_registry.DOMAINS[domain]
    except KeyError:
        raise ValueError(
            f"unknown domain {domain!r}; known: {', '.join(op_registry.DOMAINS)}"
        ) from None


def arrays_in(shape: tuple, domain: Domain | str = "real") -> Any:
    """A strategy for arrays of `shape` with values in `domain` (a `Domain` or its name:
    real, positive, nonzero, away_from_zero, near_zero, distinct, saturating, logits, bool)."""
    st, hnp = _hypothesis()
    domain = _domain(domain)
    if domain.kind == "bool":
        return hnp.arrays(np.bool_, shape)
    low, high = domain.low, domain.high
    if domain.grid is not None:
        grid = domain.grid
        points = int(round((high - low) / grid))
        elements = st.integers(0, points).map(lambda k: low + k * grid)
        return hnp.arrays(np.float64, shape, elements=elements, unique=True)
    magnitudes = st.floats(low, high, allow_subnormal=False)
    if domain.signed:
        elements = st.tuples(magnitudes, st.booleans()).map(lambda p: -p[0] if p[1] else p[0])
    else:
        elements = magnitudes
    return hnp.arrays(np.float64, shape, elements=elements)


def broadcastable_arrays(
    num: int = 2,
    domain: Domain | str = "real",
    min_dims: int = 0,
    max_dims: int = 3,
    max_side: int = 4,
) -> Any:
    """A strategy for `num` arrays whose shapes broadcast together (NumPy rules)."""
    st, hnp = _hypothesis()

    @st.composite
    def draw_arrays(draw: Callable) -> tuple:
        shapes = draw(
            hnp.mutually_broadcastable_shapes(
                num_shapes=num, min_dims=min_dims, max_dims=max_dims, max_side=max_side
            )
        ).input_shapes
        return tuple(draw(arrays_in(shape, domain)) for shape in shapes)

    return draw_arrays()


class HypothesisChoices:
    """`op_registry.Choices` drawn from hypothesis: `spec.sample(HypothesisChoices(draw))`."""

    def __init__(self, draw: Callable) -> None:
        self._draw = draw
        self._st, self._hnp = _hypothesis()

    def integer(self, low: int, high: int) -> int:
        return self._draw(self._st.integers(low, high))

    def flag(self) -> bool:
        return self._draw(self._st.booleans())

    def pick(self, options: Sequence[Any]) -> Any:
        return self._draw(self._st.sampled_from(options))

    def shape(
        self, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
    ) -> tuple:
        return self._draw(
            self._hnp.array_shapes(
                min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side
            )
        )

    def broadcastable_shapes(
        self, num: int, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
    ) -> list:
        drawn = self._draw(
            self._hnp.mutually_broadcastable_shapes(
                num_shapes=num,
                min_dims=min_dims,
                max_dims=max_dims,
                min_side=min_side,
                max_side=max_side,
            )
        )
        return list(drawn.input_shapes)

    def axis(self, ndim: int) -> int:
        return self._draw(self._st.integers(-ndim, ndim - 1))

    def axes(self, ndim: int) -> int | tuple | None:
        st = self._st
        if ndim == 0:
            return None
        return self._draw(
            st.one_of(
                st.none(),
                st.integers(-ndim, ndim - 1),
                self._hnp.valid_tuple_axes(ndim, min_size=1),
            )
        )

    def permutation(self, n: int) -> tuple:
        return tuple(self._draw(self._st.permutations(range(n))))

    def index_array(self, shape: tuple, size: int) -> np.ndarray:
        return self._draw(self._hnp.arrays(np.intp, shape, elements=self._st.integers(0, size - 1)))

    def values(self, spec: Values) -> np.ndarray:
        if spec.fixed is not None:
            return spec.fixed
        return self._draw(arrays_in(spec.shape, spec.domain))


def op_samples(op: str | op_registry.OpSpec) -> Any:
    """A strategy for `op_registry.Sample`s of one registered op (by name or spec): random
    shapes, axes, parameters and values from the op's generator, shrinking on failure."""
    st, _ = _hypothesis()
    spec = op if isinstance(op, op_registry.OpSpec) else op_registry.get(op)

    @st.composite
    def draw_sample(draw: Callable) -> op_registry.Sample:
        return spec.sample(HypothesisChoices(draw))

    return draw_sample()
