"""The op registry: every public op, how to draw valid inputs for it, and its NumPy forward.

One `OpSpec` per op (a primitive `Function`, a Tensor spelling that routes to one, and later the
functional and nn layers). A spec holds:

- `fn(*inputs, **params)`: the op as users call it (`a + b`, `x.sum(axis=...)`);
- `reference(*arrays, **params)`: the same forward written directly in NumPy;
- `cases`: hand-picked `Case`s with readable labels — broadcasting on both sides of every binary
  op, every axis/keepdims of every reduction, edge values (tied maxima, values near a kink);
- `generate(choices)`: one random `Case`, whose shapes, axes and flags come from a `Choices`
  source: `RandomChoices(rng)` here, or `testing.HypothesisChoices` in property tests.

A `Case` only describes its inputs (`Values`: shape, value `Domain`, requires_grad); a `Sample`
is a case with its arrays drawn. `tests/test_ops.py` runs every case through `gradcheck`, and
`python -m tinygrad_attn gradcheck` does the same at run time, so this module must not import
hypothesis or pytest, and it checks nothing itself: it only describes ops and their inputs.
"""

from __future__ import annotations

import fnmatch
import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from . import functional as F
from . import nn
from .ops.attention import ScaledDotProductAttention
from .tensor import Tensor, concatenate, manual_seed, stack, where

# ---------------------------------------------------------------------------- value domains


@dataclass(frozen=True)
class Domain:
    """Where an input's values are drawn from.

    Values lie in `[low, high]`; with `signed`, their magnitude does and the sign is random (so
    they stay away from 0); with `grid`, they are distinct multiples of `grid` (no two elements
    within a finite-difference step of each other, so `max` has no ties). `kind="bool"` draws
    booleans (masks, conditions) instead.
    """

    name: str
    low: float = -2.0
    high: float = 2.0
    signed: bool = False
    grid: float | None = None
    kind: str = "float"


REAL = Domain("real")
POSITIVE = Domain("positive", 0.5, 2.0)  # log, sqrt, the base of a power
NONZERO = Domain("nonzero", 0.5, 2.0, signed=True)  # divisors
AWAY_FROM_ZERO = Domain("away_from_zero", 1e-3, 2.0, signed=True)  # relu, abs: off the kink
NEAR_ZERO = Domain("near_zero", 1e-3, 0.1, signed=True)  # close to the kink of relu/abs, not on it
DISTINCT = Domain("distinct", -5.0, 5.0, grid=0.05)  # max without ties
# Inputs of a layer norm: distinct values, so no row is nearly constant. A row of (nearly)
# equal values has a variance far below eps, where the normalisation is so steep that central
# differences with a step of 1e-6 no longer measure its slope.
SPREAD = Domain("spread", -2.0, 2.0, grid=0.05)
SATURATING = Domain("saturating", 5.0, 30.0, signed=True)  # flat tails of sigmoid, tanh
LOGITS = Domain("logits", -50.0, 50.0)  # softmax far from uniform
BOOL = Domain("bool", kind="bool")
DOMAINS = {
    d.name: d
    for d in (
        REAL,
        POSITIVE,
        NONZERO,
        AWAY_FROM_ZERO,
        NEAR_ZERO,
        DISTINCT,
        SPREAD,
        SATURATING,
        LOGITS,
        BOOL,
    )
}


def draw_values(rng: np.random.Generator, shape: tuple, domain: Domain) -> np.ndarray:
    """An array of `shape` drawn from `domain` (float64, or bool for a bool domain)."""
    shape = tuple(shape)
    if domain.kind == "bool":
        return rng.random(shape) < 0.5
    if domain.grid is not None:
        points = int(round((domain.high - domain.low) / domain.grid)) + 1
        size = int(np.prod(shape, dtype=np.int64))
        if size > points:
            raise ValueError(f"domain {domain.name}: {size} distinct values asked, {points} exist")
        chosen = rng.choice(points, size=size, replace=False)
        return (domain.low + chosen * domain.grid).reshape(shape).astype(np.float64)
    values = np.asarray(rng.uniform(domain.low, domain.high, shape), dtype=np.float64)
    if domain.signed:
        values = np.where(rng.random(shape) < 0.5, -values, values)
    return values


# ------------------------------------------------------------------- cases and samples


@dataclass(frozen=True, eq=False)
class Values:
    """One argument of a case: its shape and where its values come from.

    Float values become a Tensor (`requires_grad` as given) unless `as_tensor=False`, which
    passes a plain ndarray (to exercise `ndarray / Tensor`). Bool values are always plain
    arrays (masks, conditions). `fixed` pins exact values for edge cases (tied maxima).
    """

    shape: tuple
    domain: Domain = REAL
    requires_grad: bool = True
    as_tensor: bool = True
    fixed: np.ndarray | None = None

    @property
    def is_float(self) -> bool:
        return self.domain.kind == "float"


def fixed(data: Any, requires_grad: bool = True) -> Values:
    """A `Values` with exact contents (an edge case worth pinning down)."""
    array = np.array(data)
    if array.dtype == np.bool_:
        return Values(array.shape, BOOL, requires_grad=False, fixed=array)
    array = array.astype(np.float64)
    return Values(array.shape, REAL, requires_grad=requires_grad, fixed=array)


@dataclass(frozen=True, eq=False)
class Case:
    """One way to call an op: its inputs (in argument order) and keyword parameters."""

    label: str
    inputs: tuple
    params: dict = field(default_factory=dict)

    def describe(self) -> str:
        """The label, or (for generated cases) the shapes and parameters."""
        if self.label:
            return self.label
        shapes = " & ".join(_shape_text(v.shape) for v in self.inputs)
        params = ", ".join(f"{k}={_param_text(v)}" for k, v in self.params.items())
        return shapes + (f", {params}" if params else "")


def _shape_text(shape: tuple) -> str:
    return str(tuple(int(n) for n in shape)).replace(" ", "")


def _param_text(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return np.array2string(value, separator=",").replace(" ", "").replace("\n", "")
    if isinstance(value, float):
        return f"{value:g}"
    return str(value).replace(" ", "")


@dataclass(eq=False)
class Sample:
    """A case of an op with its arrays drawn (float64): ready to run or to gradcheck."""

    spec: OpSpec
    label: str
    arrays: tuple
    values: tuple  # the `Values` each array was drawn for
    params: dict

    @property
    def id(self) -> str:
        """`Op[label]`: the readable name of this case in test ids and reports."""
        return f"{self.spec.name}[{self.label}]"

    def __repr__(self) -> str:
        # Every value in full precision: a failing property test prints this to reproduce.
        with np.printoptions(precision=17, threshold=10_000):
            arrays = ", ".join(repr(a) for a in self.arrays)
            return f"Sample({self.id!r}, arrays=({arrays}), params={self.params!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # hypothesis's printer would otherwise list every field

    def inputs(self, dtype: Any = np.float64) -> list:
        """The op's arguments: float arrays cast to `dtype` (Tensors unless `as_tensor=False`),
        bool arrays as they are. Each call makes fresh leaves."""
        made = []
        for array, spec in zip(self.arrays, self.values):
            if not spec.is_float:
                made.append(array)
            elif spec.as_tensor:
                made.append(Tensor(array, dtype=dtype, requires_grad=spec.requires_grad))
            else:
                made.append(array.astype(dtype))
        return made

    def call(self, *inputs: Any) -> Tensor:
        """Run the op on `inputs` (as made by `inputs()`) with this case's parameters."""
        return self.spec.fn(*inputs, **self.params)

    def reference(self, dtype: Any = np.float64) -> np.ndarray:
        """The NumPy forward on the same arrays (float arrays cast to `dtype`)."""
        arrays = [a.astype(dtype) if v.is_float else a for a, v in zip(self.arrays, self.values)]
        return np.asarray(self.spec.reference(*arrays, **self.params))

    @property
    def differentiable(self) -> bool:
        """True when at least one input is a Tensor that requires grad."""
        return any(v.is_float and v.as_tensor and v.requires_grad for v in self.values)


# -------------------------------------------------------------------------- choices


class Choices(Protocol):
    """A source of structural choices for `OpSpec.generate` (shapes, axes, flags, values).

    `RandomChoices` draws them from a NumPy generator; `testing.HypothesisChoices` from
    hypothesis strategies (so failures shrink to a small case)."""

    def integer(self, low: int, high: int) -> int: ...  # inclusive bounds
    def flag(self) -> bool: ...
    def pick(self, options: Sequence[Any]) -> Any: ...
    def shape(
        self, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
    ) -> tuple: ...
    def broadcastable_shapes(
        self, num: int, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
    ) -> list: ...
    def axis(self, ndim: int) -> int: ...
    def axes(self, ndim: int) -> int | tuple | None: ...
    def permutation(self, n: int) -> tuple: ...
    def index_array(self, shape: tuple, size: int) -> np.ndarray: ...
    def values(self, spec: Values) -> np.ndarray: ...


class RandomChoices:
    """`Choices` drawn from a `np.random.Generator` (the registry's own sampler)."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def integer(self, low: int, high: int) -> int:
        return int(self.rng.integers(low, high + 1))

    def flag(self) -> bool:
        return bool(self.rng.integers(2))

    def pick(self, options: Sequence[Any]) -> Any:
        return options[self.integer(0, len(options) - 1)]

    def shape(
        self, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
    ) -> tuple:
        return tuple(
            self.integer(min_side, max_side) for _ in range(self.integer(min_dims, max_dims))
        )

    def broadcastable_shapes(
        self, num: int, min_dims: int = 0, max_dims: int = 3, min_side: int = 1, max_side: int = 4
    ) -> list:
        full = self.shape(min_dims, max_dims, min_side, max_side)
        shapes = []
        for _ in range(num):
            # Each operand keeps some trailing axes of the result, a few of them stretched (1).
            ndim = self.integer(min(min_dims, len(full)), len(full))
            tail = full[len(full) - ndim :]
            shapes.append(tuple(1 if self.integer(0, 3) == 0 else n for n in tail))
        return shapes

    def axis(self, ndim: int) -> int:
        return self.integer(-ndim, ndim - 1)

    def axes(self, ndim: int) -> int | tuple | None:
        kind = self.pick(("none", "int", "tuple")) if ndim else "none"
        if kind == "none":
            return None
        if kind == "int":
            return self.axis(ndim)
        chosen = [a for a in range(ndim) if self.flag()] or [self.integer(0, ndim - 1)]
        return tuple(a - ndim if self.flag() else a for a in chosen)

    def permutation(self, n: int) -> tuple:
        return tuple(int(i) for i in self.rng.permutation(n))

    def index_array(self, shape: tuple, size: int) -> np.ndarray:
        return self.rng.integers(0, size, shape)

    def values(self, spec: Values) -> np.ndarray:
        if spec.fixed is not None:
            return spec.fixed
        return draw_values(self.rng, spec.shape, spec.domain)


# --------------------------------------------------------------------------- op specs


@dataclass(frozen=True, eq=False)
class OpSpec:
    """One registered op: how to call it, its NumPy forward, and how to draw inputs for it.

    `where` says where the op lives (`ops.elementwise`, `Tensor`, `functional`, `nn`);
    `gradcheck_options` overrides `gradcheck`'s eps/atol/rtol for this op when needed.
    """

    name: str
    fn: Callable[..., Tensor]
    reference: Callable[..., np.ndarray]
    cases: tuple
    generate: Callable[[Choices], Case]
    where: str
    doc: str = ""
    gradcheck_options: dict = field(default_factory=dict)

    def materialize(self, case: Case, choices: Choices) -> Sample:
        """Draw the arrays of `case` from `choices`."""
        arrays = tuple(choices.values(v) for v in case.inputs)
        return Sample(self, case.describe(), arrays, tuple(case.inputs), dict(case.params))

    def samples(self, rng: np.random.Generator) -> list:
        """Every hand-picked case of this op, with values drawn from `rng`."""
        choices = RandomChoices(rng)
        return [self.materialize(case, choices) for case in self.cases]

    def sample(self, rng_or_choices: np.random.Generator | Choices) -> Sample:
        """One random case: shapes, axes, parameters and values all drawn."""
        choices = (
            RandomChoices(rng_or_choices)
            if isinstance(rng_or_choices, np.random.Generator)
            else rng_or_choices
        )
        return self.materialize(self.generate(choices), choices)


_REGISTRY: dict[str, OpSpec] = {}


def register(spec: OpSpec) -> OpSpec:
    """Add `spec` to the registry (names are unique, compared without case)."""
    if spec.name.lower() in (name.lower() for name in _REGISTRY):
        raise ValueError(f"op_registry: an op named {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def names() -> list[str]:
    """The registered op names, in registration order."""
    return list(_REGISTRY)


def specs() -> list[OpSpec]:
    """Every registered `OpSpec`, in registration order."""
    return list(_REGISTRY.values())


def get(name: str) -> OpSpec:
    """The spec named `name` (case-insensitive); KeyError listing the names otherwise."""
    for key, spec in _REGISTRY.items():
        if key.lower() == name.lower():
            return spec
    raise KeyError(f"no op named {name!r}; registered ops: {', '.join(_REGISTRY)}")


def select(patterns: Iterable[str]) -> list[OpSpec]:
    """The specs matching any of `patterns` (names or shell globs such as `F.*`, without
    case), in registration order; all specs when `patterns` is empty. A pattern that matches
    nothing raises KeyError naming it."""
    patterns = list(patterns)
    if not patterns:
        return specs()
    unknown = [
        p for p in patterns if not any(fnmatch.fnmatch(n.lower(), p.lower()) for n in _REGISTRY)
    ]
    if unknown:
        raise KeyError(", ".join(unknown))
    return [
        spec
        for name, spec in _REGISTRY.items()
        if any(fnmatch.fnmatch(name.lower(), p.lower()) for p in patterns)
    ]


def all_samples(rng: np.random.Generator) -> list[Sample]:
    """Every hand-picked case of every registered op (the op table)."""
    return [sample for spec in specs() for sample in spec.samples(rng)]


# ---------------------------------------------------------------- NumPy references


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _np_relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _np_erf(x: np.ndarray) -> np.ndarray:
    # erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt by Simpson's rule: a reference that does
    # not share the op's math.erf.
    t = np.linspace(0.0, 1.0, 2001)
    weights = np.ones_like(t)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    x = np.asarray(x, dtype=np.float64)
    integrand = np.exp(-((x[..., None] * t) ** 2))  # (..., 2001)
    integral = (integrand * weights).sum(axis=-1) * (t[1] - t[0]) / 3.0 * x
    return 2.0 / math.sqrt(math.pi) * integral


def _np_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return x - np.log(np.exp(x).sum(axis=axis, keepdims=True))


def _np_getitem(x: np.ndarray, index: Any) -> np.ndarray:
    return x[index]


def _np_concatenate(*arrays: np.ndarray, axis: int = 0) -> np.ndarray:
    return np.concatenate(arrays, axis=axis)


def _np_stack(*arrays: np.ndarray, axis: int = 0) -> np.ndarray:
    return np.stack(arrays, axis=axis)


def _np_masked_fill(x: np.ndarray, mask: np.ndarray, value: float) -> np.ndarray:
    return np.where(mask, value, x)


def _np_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *mask: np.ndarray,
    scale: float,
    is_causal: bool = False,
) -> np.ndarray:
    scores = np.einsum("...le,...se->...ls", q, k) * scale  # (..., L, S)
    allowed = np.ones(scores.shape, dtype=bool)
    if is_causal:
        allowed = np.broadcast_to(np.tril(np.ones(scores.shape[-2:], dtype=bool)), scores.shape)
    elif mask and mask[0].dtype == np.bool_:
        allowed = np.broadcast_to(mask[0], scores.shape)
    elif mask:
        scores = scores + mask[0]
    weights = np.where(allowed, np.exp(scores - scores.max(axis=-1, keepdims=True)), 0.0)
    total = weights.sum(axis=-1, keepdims=True)
    weights = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
    return np.einsum("...ls,...se->...le", weights, v)  # (..., L, Ev)


# -------------------------------------------------------------- Tensor-side callables
# Named functions rather than lambdas, so a traceback from the op table says which op it ran.


def _pow_scalar(x: Tensor, exponent: float) -> Tensor:
    return x**exponent


def _np_pow_scalar(x: np.ndarray, exponent: float) -> np.ndarray:
    return np.power(x, exponent)


def _rsub(x: Tensor, number: float) -> Tensor:
    return number - x


def _np_rsub(x: np.ndarray, number: float) -> np.ndarray:
    return number - x


def _rpow(x: Tensor, base: float) -> Tensor:
    return base**x


def _np_rpow(x: np.ndarray, base: float) -> np.ndarray:
    return np.power(base, x)


def _reshape(x: Tensor, shape: tuple) -> Tensor:
    return x.reshape(shape)


def _transpose(x: Tensor, axes: tuple | None = None) -> Tensor:
    return x.transpose() if axes is None else x.transpose(tuple(axes))


def _getitem(x: Tensor, index: Any) -> Tensor:
    return x[index]


def _concatenate(*tensors: Tensor, axis: int = 0) -> Tensor:
    return concatenate(tensors, axis=axis)


def _stack(*tensors: Tensor, axis: int = 0) -> Tensor:
    return stack(tensors, axis=axis)


def _fused_attention(
    q: Tensor, k: Tensor, v: Tensor, *mask: Any, scale: float, is_causal: bool = False
) -> Tensor:
    return ScaledDotProductAttention.apply(q, k, v, *mask, scale=scale, is_causal=is_causal)


# ---------------------------------------------------------------- family builders


def _binary(
    name: str, fn: Callable, reference: Callable, a: Domain = REAL, b: Domain = REAL, doc: str = ""
) -> OpSpec:
    """A broadcasting binary op: both sides of every broadcast, scalars, one side constant."""
    pairs = [
        ("(3,4) & (3,4)", (3, 4), (3, 4)),
        ("(3,4) & (4,): right broadcast", (3, 4), (4,)),
        ("(4,) & (3,4): left broadcast", (4,), (3, 4)),
        ("(3,1) & (1,4): both stretched", (3, 1), (1, 4)),
        ("(2,3) & (): right scalar", (2, 3), ()),
        ("() & (2,3): left scalar", (), (2, 3)),
        ("(2,1,4) & (3,1): batch axes", (2, 1, 4), (3, 1)),
    ]
    cases = [Case(label, (Values(sa, a), Values(sb, b))) for label, sa, sb in pairs]
    cases.append(
        Case("(3,4) & (4,): only left needs grad", (Values((3, 4), a), Values((4,), b, False)))
    )
    cases.append(
        Case("(3,4) & (4,): only right needs grad", (Values((3, 4), a, False), Values((4,), b)))
    )

    def generate(c: Choices) -> Case:
        sa, sb = c.broadcastable_shapes(2)
        return Case("", (Values(sa, a), Values(sb, b)))

    return OpSpec(name, fn, reference, tuple(cases), generate, "ops.elementwise", doc)


def _unary(
    name: str,
    fn: Callable,
    reference: Callable,
    domain: Domain = REAL,
    edges: Sequence[tuple] = (),
) -> OpSpec:
    """An elementwise function: a matrix, a 0-d tensor, a 3-d tensor, then its edge domains."""
    cases = [
        Case("(3,4)", (Values((3, 4), domain),)),
        Case("(): 0-d", (Values((), domain),)),
        Case("(2,3,4)", (Values((2, 3, 4), domain),)),
    ]
    cases += [Case(f"(3,4) {edge.name}: {why}", (Values((3, 4), edge),)) for edge, why in edges]

    def generate(c: Choices) -> Case:
        return Case("", (Values(c.shape(), domain),))

    return OpSpec(name, fn, reference, tuple(cases), generate, "ops.elementwise")


_REDUCE_AXES = (None, 0, 1, 2, -1, (0, 2), (-1, 0))


def _reduction(
    name: str, fn: Callable, reference: Callable, domain: Domain = REAL, extra: Sequence = ()
) -> OpSpec:
    """A reduction: every axis form (None, each axis, negative, tuples), with and without
    keepdims."""
    cases = [
        Case(
            f"(2,3,4) axis={_param_text(axis)} keepdims={keepdims}",
            (Values((2, 3, 4), domain),),
            {"axis": axis, "keepdims": keepdims},
        )
        for axis in _REDUCE_AXES
        for keepdims in (False, True)
    ]
    cases += [
        Case("(): 0-d, axis=None", (Values((), domain),), {"axis": None, "keepdims": False}),
        Case("(5,) axis=0", (Values((5,), domain),), {"axis": 0, "keepdims": False}),
        *extra,
    ]

    def generate(c: Choices) -> Case:
        shape = c.shape()
        params = {"axis": c.axes(len(shape)), "keepdims": c.flag()}
        if name == "Var":
            params["ddof"] = c.pick((0, 1)) if _reduced_count(shape, params["axis"]) > 1 else 0
        return Case("", (Values(shape, domain),), params)

    return OpSpec(name, fn, reference, tuple(cases), generate, "ops.reduce")


def _reduced_count(shape: tuple, axis: Any) -> int:
    if axis is None:
        axes = range(len(shape))
    else:
        axes = (axis,) if isinstance(axis, int) else axis
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


# ------------------------------------------------------------- elementwise entries

register(_binary("Add", operator.add, np.add))
register(_binary("Sub", operator.sub, np.subtract))
register(_binary("Mul", operator.mul, np.multiply))
register(_binary("Div", operator.truediv, np.true_divide, b=NONZERO))
register(_binary("Pow", operator.pow, np.power, a=POSITIVE))
register(_unary("Neg", operator.neg, np.negative))
register(_unary("Exp", Tensor.exp, np.exp))
register(_unary("Log", Tensor.log, np.log, POSITIVE))
register(_unary("Sqrt", Tensor.sqrt, np.sqrt, POSITIVE))
register(_unary("Tanh", Tensor.tanh, np.tanh, edges=[(SATURATING, "flat tails")]))
register(_unary("Sigmoid", Tensor.sigmoid, _np_sigmoid, edges=[(SATURATING, "flat tails")]))
_KINK = [(NEAR_ZERO, "near the kink at 0")]
register(_unary("Relu", Tensor.relu, _np_relu, AWAY_FROM_ZERO, _KINK))
register(_unary("Abs", Tensor.abs, np.abs, AWAY_FROM_ZERO, _KINK))
register(_unary("Erf", Tensor.erf, _np_erf))

_SCALAR_EXPONENTS = ((2, REAL), (3, REAL), (0.5, POSITIVE), (-1.5, POSITIVE), (-1, NONZERO))


def _generate_pow_scalar(c: Choices) -> Case:
    exponent, domain = c.pick(_SCALAR_EXPONENTS)
    return Case("", (Values(c.shape(), domain),), {"exponent": exponent})


register(
    OpSpec(
        "pow_scalar",
        _pow_scalar,
        _np_pow_scalar,
        tuple(
            Case(f"(3,4) ** {e}", (Values((3, 4), d),), {"exponent": e})
            for e, d in (*_SCALAR_EXPONENTS, (0, NONZERO))
        ),
        _generate_pow_scalar,
        "Tensor",
        "x ** number (Pow with a constant exponent)",
    )
)


def _generate_rsub(c: Choices) -> Case:
    return Case("", (Values(c.shape()),), {"number": c.pick((1.0, 2.5, -3.0))})


register(
    OpSpec(
        "rsub",
        _rsub,
        _np_rsub,
        (
            Case("2.5 - (3,4)", (Values((3, 4)),), {"number": 2.5}),
            Case("1 - ()", (Values(()),), {"number": 1}),
        ),
        _generate_rsub,
        "Tensor",
        "number - x (Tensor.__rsub__)",
    )
)


def _generate_rtruediv(c: Choices) -> Case:
    sa, sb = c.broadcastable_shapes(2)
    return Case("", (Values(sa, as_tensor=False, requires_grad=False), Values(sb, NONZERO)))


register(
    OpSpec(
        "rtruediv",
        operator.truediv,
        np.true_divide,
        (
            Case(
                "ndarray (3,4) / (3,4)",
                (Values((3, 4), as_tensor=False, requires_grad=False), Values((3, 4), NONZERO)),
            ),
            Case(
                "ndarray (3,4) / (4,): broadcast",
                (Values((3, 4), as_tensor=False, requires_grad=False), Values((4,), NONZERO)),
            ),
        ),
        _generate_rtruediv,
        "Tensor",
        "ndarray / x (Tensor.__rtruediv__)",
    )
)


def _generate_rpow(c: Choices) -> Case:
    return Case("", (Values(c.shape()),), {"base": c.pick((2.0, 0.5, math.e))})


register(
    OpSpec(
        "rpow",
        _rpow,
        _np_rpow,
        (
            Case("2 ** (3,4)", (Values((3, 4)),), {"base": 2.0}),
            Case("0.5 ** (2,3)", (Values((2, 3)),), {"base": 0.5}),
        ),
        _generate_rpow,
        "Tensor",
        "number ** x: the gradient flows to the exponent (Tensor.__rpow__)",
    )
)

# --------------------------------------------------------------- reduction entries

register(_reduction("Sum", Tensor.sum, np.sum))
register(_reduction("Mean", Tensor.mean, np.mean))
register(
    _reduction(
        "Max",
        Tensor.max,
        np.max,
        DISTINCT,
        extra=[
            # Two tied maxima: the gradient splits evenly, which is also what central
            # differences measure (+eps moves the max, -eps leaves the other one in place).
            Case(
                "(2,4) two tied maxima per row, axis=1",
                (fixed([[1.0, 3.0, 3.0, 0.0], [2.0, -1.0, 0.5, 2.0]]),),
                {"axis": 1, "keepdims": False},
            ),
            Case(
                "(2,3) two tied maxima overall, axis=None",
                (fixed([[0.5, 4.0, -1.0], [4.0, 2.0, 3.0]]),),
                {"axis": None, "keepdims": True},
            ),
        ],
    )
)
register(
    _reduction(
        "Var",
        Tensor.var,
        np.var,
        extra=[
            Case(
                f"(3,4) axis={_param_text(axis)} ddof=1",
                (Values((3, 4)),),
                {"axis": axis, "keepdims": False, "ddof": 1},
            )
            for axis in (None, 0, -1)
        ],
    )
)

# ---------------------------------------------------------------- movement entries


def _generate_reshape(c: Choices) -> Case:
    shape = c.shape()
    size = int(np.prod(shape, dtype=np.int64))
    divisors = [d for d in range(1, size + 1) if size % d == 0]
    target = c.pick(((size,), (-1,), (1, size), (c.pick(divisors), -1), (*shape, 1)))
    return Case("", (Values(shape),), {"shape": target})


register(
    OpSpec(
        "Reshape",
        _reshape,
        np.reshape,
        tuple(
            Case(f"{_shape_text(s)} -> {_param_text(t)}", (Values(s),), {"shape": t})
            for s, t in (
                ((2, 3, 4), (6, 4)),
                ((2, 3, 4), (4, -1)),
                ((2, 3, 4), (24,)),
                ((), (1, 1)),
                ((3, 1), (3,)),
            )
        ),
        _generate_reshape,
        "ops.movement",
    )
)


def _generate_transpose(c: Choices) -> Case:
    shape = c.shape()
    axes = c.permutation(len(shape)) if c.flag() else None
    return Case("", (Values(shape),), {"axes": axes})


register(
    OpSpec(
        "Transpose",
        _transpose,
        np.transpose,
        tuple(
            Case(f"{_shape_text(s)} axes={_param_text(a)}", (Values(s),), {"axes": a})
            for s, a in (
                ((3, 4), None),
                ((2, 3, 4), None),
                ((2, 3, 4), (1, 0, 2)),
                ((2, 3, 4), (2, 0, 1)),
                ((2, 3, 4), (0, -1, 1)),
            )
        ),
        _generate_transpose,
        "ops.movement",
    )
)


def _generate_swapaxes(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    return Case("", (Values(shape),), {"axis1": c.axis(len(shape)), "axis2": c.axis(len(shape))})


register(
    OpSpec(
        "swapaxes",
        Tensor.swapaxes,
        np.swapaxes,
        tuple(
            Case(f"(2,3,4) swapaxes({a},{b})", (Values((2, 3, 4)),), {"axis1": a, "axis2": b})
            for a, b in ((0, 2), (-1, -2), (1, 1))
        ),
        _generate_swapaxes,
        "Tensor",
        "Transpose of two axes",
    )
)


def _generate_unsqueeze(c: Choices) -> Case:
    shape = c.shape()
    return Case("", (Values(shape),), {"axis": c.integer(-len(shape) - 1, len(shape))})


register(
    OpSpec(
        "unsqueeze",
        Tensor.unsqueeze,
        np.expand_dims,
        tuple(Case(f"(3,4) unsqueeze({a})", (Values((3, 4)),), {"axis": a}) for a in (0, 1, 2, -1)),
        _generate_unsqueeze,
        "Tensor",
        "Reshape that inserts an axis of size 1",
    )
)


def _generate_squeeze(c: Choices) -> Case:
    shape = tuple(1 if c.flag() else n for n in c.shape())
    ones = [i for i, n in enumerate(shape) if n == 1]
    axis = None if not ones or c.flag() else tuple(i for i in ones if c.flag()) or ones[0]
    return Case("", (Values(shape),), {"axis": axis})


register(
    OpSpec(
        "squeeze",
        Tensor.squeeze,
        np.squeeze,
        tuple(
            Case(f"(1,3,1,4) squeeze({_param_text(a)})", (Values((1, 3, 1, 4)),), {"axis": a})
            for a in (None, 0, 2, (0, 2), -2)
        ),
        _generate_squeeze,
        "Tensor",
        "Reshape that drops axes of size 1",
    )
)

_GETITEM_CASES = (
    ("basic: x[1]", (3, 4), 1),
    ("basic: x[-1, 1:3]", (3, 4), (-1, slice(1, 3))),
    ("basic: x[:, ::-2]", (3, 4), (slice(None), slice(None, None, -2))),
    ("basic: x[None, ..., 0]", (2, 3, 4), (None, Ellipsis, 0)),
    ("basic: x[1:, None, 2]", (3, 4), (slice(1, None), None, 2)),
    ("array: x[[0,2,0]] repeated rows", (3, 4), np.array([0, 2, 0])),
    ("array: x[:, [1,1,3,1]] repeated columns", (3, 4), (slice(None), np.array([1, 1, 3, 1]))),
    ("array: x[[0,1,0],[2,2,2]] repeated pairs", (3, 4), (np.array([0, 1, 0]), np.array([2] * 3))),
    ("array: x[[[0,1],[1,1]]] 2-d index", (3, 4), np.array([[0, 1], [1, 1]])),
    ("array: x[-1, [3,-1]] negative indices", (3, 4), (-1, np.array([3, -1]))),
    ("bool: x[[True,False,True]]", (3, 4), np.array([True, False, True])),
)


def _generate_getitem(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    first = shape[0]
    kind = c.pick(("int", "slice", "array", "array_pair", "column_array"))
    if kind in ("array_pair", "column_array") and len(shape) < 2:
        kind = "array"
    if kind == "int":
        index: Any = c.integer(-first, first - 1)
    elif kind == "slice":
        index = (slice(c.integer(0, first - 1), None, c.pick((1, 2, -1))),)
        if len(shape) > 1:
            index += (c.integer(0, shape[1] - 1),)
    elif kind == "array":
        index = c.index_array((c.integer(1, 5),), first)
    elif kind == "array_pair":
        count = c.integer(1, 5)
        index = (c.index_array((count,), first), c.index_array((count,), shape[1]))
    else:
        index = (slice(None), c.index_array((c.integer(1, 5),), shape[1]))
    return Case("", (Values(shape),), {"index": index})


register(
    OpSpec(
        "GetItem",
        _getitem,
        _np_getitem,
        tuple(Case(label, (Values(s),), {"index": i}) for label, s, i in _GETITEM_CASES),
        _generate_getitem,
        "ops.movement",
        "basic and integer-array indexing; repeated indices accumulate",
    )
)


def _generate_concatenate(c: Choices) -> Case:
    shape = c.shape(min_dims=1)
    axis = c.axis(len(shape))
    pieces = []
    for _ in range(c.integer(1, 3)):
        piece = list(shape)
        piece[axis] = c.integer(1, 3)
        pieces.append(Values(tuple(piece)))
    return Case("", tuple(pieces), {"axis": axis})


register(
    OpSpec(
        "Concatenate",
        _concatenate,
        _np_concatenate,
        (
            Case("(2,3) & (1,3) axis=0", (Values((2, 3)), Values((1, 3))), {"axis": 0}),
            Case(
                "(2,1) & (2,3) & (2,2) axis=1",
                (Values((2, 1)), Values((2, 3)), Values((2, 2))),
                {"axis": 1},
            ),
            Case("(2,3,1) & (2,3,2) axis=-1", (Values((2, 3, 1)), Values((2, 3, 2))), {"axis": -1}),
            Case("(4,) alone", (Values((4,)),), {"axis": 0}),
            Case(
                "(2,3) & constant (1,3)",
                (Values((2, 3)), Values((1, 3), requires_grad=False)),
                {"axis": 0},
            ),
        ),
        _generate_concatenate,
        "ops.movement",
    )
)


def _generate_stack(c: Choices) -> Case:
    shape = c.shape(max_dims=2)
    count = c.integer(1, 3)
    return Case(
        "",
        tuple(Values(shape) for _ in range(count)),
        {"axis": c.integer(-len(shape) - 1, len(shape))},
    )


register(
    OpSpec(
        "Stack",
        _stack,
        _np_stack,
        tuple(
            Case(f"3 x (2,3) axis={a}", (Values((2, 3)),) * 3, {"axis": a}) for a in (0, 1, 2, -1)
        )
        + (Case("2 x () axis=0", (Values(()), Values(())), {"axis": 0}),),
        _generate_stack,
        "ops.movement",
    )
)


def _generate_where(c: Choices) -> Case:
    sc, sa, sb = c.broadcastable_shapes(3)
    return Case("", (Values(sc, BOOL), Values(sa), Values(sb)))


register(
    OpSpec(
        "Where",
        where,
        np.where,
        (
            Case("(3,4) ? (3,4) : (3,4)", (Values((3, 4), BOOL), Values((3, 4)), Values((3, 4)))),
            Case(
                "(4,) ? (3,1) : (): all broadcast",
                (Values((4,), BOOL), Values((3, 1)), Values(())),
            ),
            Case(
                "(3,4) ? (3,4) : constant (4,)",
                (Values((3, 4), BOOL), Values((3, 4)), Values((4,), requires_grad=False)),
            ),
            Case(
                "(2,1,4) ? (3,4) : (2,3,1): batch broadcast",
                (Values((2, 1, 4), BOOL), Values((3, 4)), Values((2, 3, 1))),
            ),
        ),
        _generate_where,
        "ops.movement",
    )
)


def _broadcastable_to(c: Choices, shape: tuple) -> tuple:
    """A shape that broadcasts to `shape` without enlarging it (a mask's shape)."""
    ndim = c.integer(0, len(shape))
    return tuple(1 if c.flag() else n for n in shape[len(shape) - ndim :])


def _generate_masked_fill(c: Choices) -> Case:
    shape = c.shape()
    return Case(
        "",
        (Values(shape), Values(_broadcastable_to(c, shape), BOOL)),
        {"value": c.pick((0.0, -1e9, 2.5))},
    )


register(
    OpSpec(
        "MaskedFill",
        Tensor.masked_fill,
        _np_masked_fill,
        (
            Case(
                "(3,4) mask (3,4) value=0",
                (Values((3, 4)), Values((3, 4), BOOL)),
                {"value": 0.0},
            ),
            Case(
                "(3,4) mask (4,) value=-1e9",
                (Values((3, 4)), Values((4,), BOOL)),
                {"value": -1e9},
            ),
            Case(
                "(2,3,4) mask (3,1) value=2.5",
                (Values((2, 3, 4)), Values((3, 1), BOOL)),
                {"value": 2.5},
            ),
        ),
        _generate_masked_fill,
        "ops.movement",
    )
)

# ------------------------------------------------------------ attention building blocks

_MATMUL_SHAPES = (
    ("(3,) @ (3,): dot product", (3,), (3,)),
    ("(3,) @ (3,4): vector-matrix", (3,), (3, 4)),
    ("(2,3) @ (3,): matrix-vector", (2, 3), (3,)),
    ("(2,3) @ (3,4)", (2, 3), (3, 4)),
    ("(2,2,3) @ (3,4): rows times one weight", (2, 2, 3), (3, 4)),
    ("(2,3) @ (2,3,4): one left, batched right", (2, 3), (2, 3, 4)),
    ("(2,2,3) @ (2,3,4): batched", (2, 2, 3), (2, 3, 4)),
    ("(2,1,2,3) @ (3,3,4): broadcast batch axes", (2, 1, 2, 3), (3, 3, 4)),
    ("(4,) @ (2,4,3): vector, batched right", (4,), (2, 4, 3)),
    ("(2,3,4) @ (4,): batched left, vector", (2, 3, 4), (4,)),
    ("(3,3) @ (3,3): square", (3, 3), (3, 3)),
)


def _generate_matmul(c: Choices) -> Case:
    m, k, n = c.integer(1, 4), c.integer(1, 4), c.integer(1, 4)
    batch_a, batch_b = c.broadcastable_shapes(2, max_dims=2, max_side=3)
    form = c.pick(("matrix", "vector_left", "vector_right", "vectors"))
    left = (k,) if form in ("vector_left", "vectors") else (*batch_a, m, k)
    right = (k,) if form in ("vector_right", "vectors") else (*batch_b, k, n)
    return Case("", (Values(left), Values(right)))


register(
    OpSpec(
        "MatMul",
        operator.matmul,
        np.matmul,
        tuple(Case(label, (Values(a), Values(b))) for label, a, b in _MATMUL_SHAPES)
        + (Case("(2,3) @ constant (3,4)", (Values((2, 3)), Values((3, 4), requires_grad=False))),),
        _generate_matmul,
        "ops.matmul",
    )
)


def _generate_rmatmul(c: Choices) -> Case:
    m, k, n = c.integer(1, 4), c.integer(1, 4), c.integer(1, 4)
    return Case("", (Values((m, k), as_tensor=False, requires_grad=False), Values((k, n))))


register(
    OpSpec(
        "rmatmul",
        operator.matmul,
        np.matmul,
        (
            Case(
                "ndarray (2,3) @ (3,4)",
                (Values((2, 3), as_tensor=False, requires_grad=False), Values((3, 4))),
            ),
        ),
        _generate_rmatmul,
        "Tensor",
        "ndarray @ x (Tensor.__rmatmul__)",
    )
)


def _softmax_spec(name: str, fn: Callable, reference: Callable) -> OpSpec:
    def generate(c: Choices) -> Case:
        shape = c.shape(min_dims=1)
        return Case("", (Values(shape),), {"axis": c.axis(len(shape))})

    return OpSpec(
        name,
        fn,
        reference,
        (
            Case("(3,5) axis=-1", (Values((3, 5)),), {"axis": -1}),
            Case("(3,5) axis=0", (Values((3, 5)),), {"axis": 0}),
            Case("(2,3,4) axis=1", (Values((2, 3, 4)),), {"axis": 1}),
            Case("(1,) axis=0: one element", (Values((1,)),), {"axis": 0}),
            Case("(2,4) logits in [-50,50]", (Values((2, 4), LOGITS),), {"axis": -1}),
        ),
        generate,
        "ops.softmax",
    )


register(_softmax_spec("Softmax", Tensor.softmax, _np_softmax))
register(_softmax_spec("LogSoftmax", Tensor.log_softmax, _np_log_softmax))


def _attention_case(
    label: str,
    batch: tuple,
    length: int,
    source: int,
    width: int,
    value_width: int,
    mask: Values | None = None,
    is_causal: bool = False,
) -> Case:
    inputs = (
        Values((*batch, length, width)),
        Values((*batch, source, width)),
        Values((*batch, source, value_width)),
    )
    if mask is not None:
        inputs += (mask,)
    return Case(label, inputs, {"scale": 1 / math.sqrt(width), "is_causal": is_causal})


def _generate_attention(c: Choices) -> Case:
    batch = c.shape(max_dims=2, max_side=2)
    length, source = c.integer(1, 4), c.integer(1, 4)
    width, value_width = c.integer(1, 4), c.integer(1, 4)
    kind = c.pick(("none", "causal", "bool", "float"))
    mask = None
    if kind == "bool":
        mask = Values((length, source), BOOL)
    elif kind == "float":
        mask = Values((length, source))
    return _attention_case(
        "", batch, length, source, width, value_width, mask, is_causal=kind == "causal"
    )


register(
    OpSpec(
        "ScaledDotProductAttention",
        _fused_attention,
        _np_attention,
        (
            _attention_case("q (2,3,4), k,v (2,5,_): no mask", (2,), 3, 5, 4, 6),
            _attention_case("(3,4) self-attention, causal", (), 3, 3, 4, 4, is_causal=True),
            _attention_case("L=3 < S=5, causal top-left", (2,), 3, 5, 4, 2, is_causal=True),
            _attention_case("L=4 > S=2, causal", (), 4, 2, 3, 3, is_causal=True),
            _attention_case("bool mask (3,5)", (2,), 3, 5, 4, 2, Values((3, 5), BOOL)),
            _attention_case(
                "bool mask with a fully masked row (gives zeros)",
                (),
                2,
                3,
                2,
                2,
                fixed([[True, False, True], [False, False, False]]),
            ),
            _attention_case("float mask (3,5), added to scores", (2,), 3, 5, 4, 2, Values((3, 5))),
            _attention_case("heads (1,2,3,4)", (1, 2), 3, 3, 4, 4),
        ),
        _generate_attention,
        "ops.attention",
        "the fused op behind F.scaled_dot_product_attention",
    )
)

# ====================================================================== functional (F.*)


def _np_gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + _np_erf(x / math.sqrt(2)))


def _np_cross_entropy(logits: np.ndarray, target: np.ndarray, reduction: str) -> np.ndarray:
    log_probs = _np_log_softmax(logits, axis=-1)  # (..., C)
    picked = np.take_along_axis(log_probs, target[..., None], axis=-1)[..., 0]  # target's shape
    return _np_reduce(-picked, reduction)


def _np_mse_loss(pred: np.ndarray, target: np.ndarray, reduction: str) -> np.ndarray:
    return _np_reduce((pred - target) ** 2, reduction)


def _np_reduce(loss: np.ndarray, reduction: str) -> np.ndarray:
    return {"mean": np.mean, "sum": np.sum}.get(reduction, np.asarray)(loss)


def _np_layer_norm(
    x: np.ndarray, *affine: np.ndarray, normalized_shape: tuple, eps: float = 1e-5
) -> np.ndarray:
    axes = tuple(range(-len(normalized_shape), 0))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + eps)
    if affine:
        out = out * affine[0]
    if len(affine) > 1:
        out = out + affine[1]
    return out


def _layer_norm(x: Tensor, *affine: Tensor, normalized_shape: tuple, eps: float = 1e-5) -> Tensor:
    return F.layer_norm(x, normalized_shape, *affine, eps=eps)


def _dropout(x: Tensor, p: float, training: bool, seed: int) -> Tensor:
    # Seeding the global generator first makes the mask the same on every call, which
    # gradcheck (many forwards of one function) needs.
    manual_seed(seed)
    return F.dropout(x, p, training)


def _np_dropout(x: np.ndarray, p: float, training: bool, seed: int) -> np.ndarray:
    """The documented recipe: keep where a uniform draw of the seeded generator is >= p."""
    if not training or p == 0:
        return x
    keep = np.random.default_rng(seed).random(x.shape) >= p
    return x * keep / (1 - p)


def _np_attention_default_scale(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *mask: np.ndarray,
    is_causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return _np_attention(q, k, v, *mask, scale=scale, is_causal=is_causal)


def _sdpa(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *mask: Any,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    attn_mask = mask[0] if mask else None
    return F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal=is_causal, scale=scale)


def _attention_composed(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *mask: Any,
    is_causal: bool = False,
    scale: float | None = None,
) -> Tensor:
    attn_mask = mask[0] if mask else None
    return F.attention_composed(q, k, v, attn_mask, is_causal=is_causal, scale=scale)


def _attention_weights(
    q: Tensor, k: Tensor, *mask: Any, is_causal: bool = False, scale: float | None = None
) -> Tensor:
    attn_mask = mask[0] if mask else None
    return F.attention_weights(q, k, attn_mask, is_causal=is_causal, scale=scale)


def _np_attention_weights(
    q: np.ndarray,
    k: np.ndarray,
    *mask: np.ndarray,
    is_causal: bool = False,
    scale: float | None = None,
) -> np.ndarray:
    # The weights are attention with the identity as values: P @ I = P.
    eye = np.broadcast_to(np.eye(k.shape[-2]), (*k.shape[:-1], k.shape[-2]))
    return _np_attention_default_scale(q, k, eye, *mask, is_causal=is_causal, scale=scale)


def _functional_unary(name: str, fn: Callable, reference: Callable, domain: Domain) -> OpSpec:
    spec = _unary(name, fn, reference, domain)
    return OpSpec(name, fn, reference, spec.cases[:2], spec.generate, "functional")


register(_functional_unary("F.relu", F.relu, _np_relu, AWAY_FROM_ZERO))
register(_functional_unary("F.sigmoid", F.sigmoid, _np_sigmoid, REAL))
register(_functional_unary("F.tanh", F.tanh, np.tanh, REAL))
register(
    OpSpec(
        "F.softmax",
        F.softmax,
        _np_softmax,
        (Case("(2,3,4) axis=1", (Values((2, 3, 4)),), {"axis": 1}),),
        _softmax_spec("", F.softmax, _np_softmax).generate,
        "functional",
    )
)
register(
    OpSpec(
        "F.log_softmax",
        F.log_softmax,
        _np_log_softmax,
        (Case("(2,3,4) axis=-1", (Values((2, 3, 4)),), {"axis": -1}),),
        _softmax_spec("", F.log_softmax, _np_log_softmax).generate,
        "functional",
    )
)


def _generate_gelu(c: Choices) -> Case:
    return Case("", (Values(c.shape()),), {"approximate": c.pick(("none", "tanh"))})


register(
    OpSpec(
        "F.gelu",
        F.gelu,
        _np_gelu,
        tuple(
            Case(f"{_shape_text(s)} approximate={a}", (Values(s),), {"approximate": a})
            for s in ((3, 4), ())
            for a in ("none", "tanh")
        ),
        _generate_gelu,
        "functional",
    )
)


def _cross_entropy_case(label: str, batch: tuple, classes: int, target: Any, reduction: str):
    return Case(
        label,
        (Values((*batch, classes)),),
        {"target": np.asarray(target), "reduction": reduction},
    )


def _generate_cross_entropy(c: Choices) -> Case:
    batch = c.shape(max_dims=2)
    classes = c.integer(1, 5)
    return Case(
        "",
        (Values((*batch, classes)),),
        {
            "target": c.index_array(batch, classes),
            "reduction": c.pick(("mean", "sum", "none")),
        },
    )


register(
    OpSpec(
        "F.cross_entropy",
        F.cross_entropy,
        _np_cross_entropy,
        (
            _cross_entropy_case("(4,5) mean", (4,), 5, [0, 4, 2, 2], "mean"),
            _cross_entropy_case("(2,3,5) (B,T,C) sum", (2, 3), 5, [[1, 0, 4], [4, 4, 2]], "sum"),
            _cross_entropy_case("(3,2) none", (3,), 2, [1, 1, 0], "none"),
            _cross_entropy_case("(5,) one row, 0-d target", (), 5, 3, "mean"),
        ),
        _generate_cross_entropy,
        "functional",
        "class axis last; integer targets",
    )
)


def _generate_mse_loss(c: Choices) -> Case:
    shape = c.shape()
    return Case("", (Values(shape), Values(shape)), {"reduction": c.pick(("mean", "sum", "none"))})


register(
    OpSpec(
        "F.mse_loss",
        F.mse_loss,
        _np_mse_loss,
        tuple(
            Case(f"(3,4) {r}", (Values((3, 4)), Values((3, 4))), {"reduction": r})
            for r in ("mean", "sum", "none")
        )
        + (
            Case(
                "(3,4) constant target",
                (Values((3, 4)), Values((3, 4), requires_grad=False)),
                {"reduction": "mean"},
            ),
        ),
        _generate_mse_loss,
        "functional",
    )
)


def _layer_norm_shape(c: Choices) -> tuple:
    # At least 4 features: over 1 or 2 the normalisation is degenerate (a constant, or the
    # sign of the difference), with gradients that are pure rounding noise.
    return (*c.shape(max_dims=2, max_side=3), c.integer(4, 6))


def _generate_layer_norm(c: Choices) -> Case:
    shape = _layer_norm_shape(c)
    normalized = shape[len(shape) - c.integer(1, len(shape)) :]
    affine = tuple(Values(normalized) for _ in range(c.integer(0, 2)))
    return Case("", (Values(shape, SPREAD), *affine), {"normalized_shape": normalized})


register(
    OpSpec(
        "F.layer_norm",
        _layer_norm,
        _np_layer_norm,
        (
            Case(
                "(2,3,4) over (4,), weight and bias",
                (Values((2, 3, 4), SPREAD), Values((4,)), Values((4,))),
                {"normalized_shape": (4,)},
            ),
            Case(
                "(2,3,4) over (3,4), weight and bias",
                (Values((2, 3, 4), SPREAD), Values((3, 4)), Values((3, 4))),
                {"normalized_shape": (3, 4)},
            ),
            Case(
                "(3,5) over (5,), no affine", (Values((3, 5), SPREAD),), {"normalized_shape": (5,)}
            ),
            Case(
                "(3,4) over (4,), eps=0.1, weight only",
                (Values((3, 4), SPREAD), Values((4,))),
                {"normalized_shape": (4,), "eps": 0.1},
            ),
        ),
        _generate_layer_norm,
        "functional",
    )
)


def _generate_dropout(c: Choices) -> Case:
    params = {"p": c.pick((0.0, 0.25, 0.5)), "training": c.flag(), "seed": c.integer(0, 9)}
    return Case("", (Values(c.shape()),), params)


register(
    OpSpec(
        "F.dropout",
        _dropout,
        _np_dropout,
        (
            Case("(4,5) p=0.5", (Values((4, 5)),), {"p": 0.5, "training": True, "seed": 3}),
            Case("(4,5) p=0.2", (Values((4, 5)),), {"p": 0.2, "training": True, "seed": 4}),
            Case("(4,5) eval", (Values((4, 5)),), {"p": 0.5, "training": False, "seed": 0}),
        ),
        _generate_dropout,
        "functional",
        "reseeds the global generator on every call, so the mask is fixed",
    )
)


def _sdpa_case(
    label: str, q: tuple, k: tuple, v: tuple, mask: Values | None = None, **params: Any
) -> Case:
    inputs = (Values(q), Values(k), Values(v)) + ((mask,) if mask is not None else ())
    return Case(label, inputs, params)


_SDPA_CASES = (
    _sdpa_case("(2,3,4) x (2,5,4) x (2,5,3)", (2, 3, 4), (2, 5, 4), (2, 5, 3)),
    _sdpa_case("(3,4) causal", (3, 4), (3, 4), (3, 4), is_causal=True),
    _sdpa_case("L=2 < S=4 causal", (2, 3), (4, 3), (4, 2), is_causal=True),
    _sdpa_case(
        "bool mask (2,1,3,3) over heads",
        (2, 2, 3, 4),
        (2, 2, 3, 4),
        (2, 2, 3, 4),
        Values((2, 1, 3, 3), BOOL),
    ),
    _sdpa_case("float mask (3,5), needs grad", (3, 4), (5, 4), (5, 2), Values((3, 5))),
    _sdpa_case("scale=0.3", (3, 4), (5, 4), (5, 2), scale=0.3),
    _sdpa_case("batch broadcast (2,1,..) x (1,2,..)", (2, 1, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3)),
)


def _generate_sdpa(c: Choices) -> Case:
    batch = c.shape(max_dims=2, max_side=2)
    length, source, width = c.integer(1, 4), c.integer(1, 4), c.integer(1, 4)
    kind = c.pick(("none", "causal", "bool", "float"))
    mask = {"bool": Values((length, source), BOOL), "float": Values((length, source))}.get(kind)
    return _sdpa_case(
        "",
        (*batch, length, width),
        (*batch, source, width),
        (*batch, source, c.integer(1, 4)),
        mask,
        is_causal=kind == "causal",
    )


register(
    OpSpec(
        "F.scaled_dot_product_attention",
        _sdpa,
        _np_attention_default_scale,
        _SDPA_CASES,
        _generate_sdpa,
        "functional",
        "the fused op, through the functional's argument checks",
    )
)
register(
    OpSpec(
        "F.attention_composed",
        _attention_composed,
        _np_attention_default_scale,
        _SDPA_CASES,
        _generate_sdpa,
        "functional",
        "attention from primitive ops (matmul, masked_fill, softmax)",
    )
)


def _generate_attention_weights(c: Choices) -> Case:
    case = _generate_sdpa(c)
    inputs = case.inputs[:2] + case.inputs[3:]  # no values
    return Case("", inputs, case.params)


register(
    OpSpec(
        "F.attention_weights",
        _attention_weights,
        _np_attention_weights,
        tuple(
            Case(case.label, case.inputs[:2] + case.inputs[3:], case.params) for case in _SDPA_CASES
        ),
        _generate_attention_weights,
        "functional",
        "the attention table softmax(q k^T * scale (+ mask))",
    )
)

# ============================================================================ nn modules
# Each layer is gradchecked with respect to its input AND its parameters: the parameters are
# passed in as inputs and swapped in for one call by `nn.functional_call`. The parameter
# shapes in the cases follow each layer's contract; tests/test_ops.py checks them against
# `named_parameters()`.

_MODULES: dict = {}


def _module(kind: type, *config: Any) -> nn.Module:
    """One instance per layer configuration (its own parameters are never used)."""
    key = (kind, config)
    if key not in _MODULES:
        _MODULES[key] = kind(*config)
    return _MODULES[key]


def _with_parameters(module: nn.Module, parameters: Sequence[Tensor], *args: Any, **kw: Any):
    names = [name for name, _ in module.named_parameters()]
    return nn.functional_call(module, dict(zip(names, parameters)), *args, **kw)


def _nn_linear(x: Tensor, weight: Tensor, *bias: Tensor) -> Tensor:
    module = _module(nn.Linear, weight.shape[1], weight.shape[0], bool(bias))
    return _with_parameters(module, (weight, *bias), x)


def _np_linear(x: np.ndarray, weight: np.ndarray, *bias: np.ndarray) -> np.ndarray:
    out = x @ weight.T
    return out + bias[0] if bias else out


def _nn_layer_norm(x: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    return _with_parameters(_module(nn.LayerNorm, tuple(weight.shape)), (weight, bias), x)


def _np_nn_layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return _np_layer_norm(x, weight, bias, normalized_shape=weight.shape)


def _nn_embedding(weight: Tensor, ids: np.ndarray) -> Tensor:
    return _with_parameters(_module(nn.Embedding, *weight.shape), (weight,), ids)


def _np_embedding(weight: np.ndarray, ids: np.ndarray) -> np.ndarray:
    return weight[ids]


def _nn_self_attention(x: Tensor, *parameters: Tensor) -> Tensor:
    return _with_parameters(_module(nn.SelfAttention, x.shape[-1]), parameters, x)


def _np_self_attention(x: np.ndarray, wq: np.ndarray, wk: np.ndarray, wv: np.ndarray):
    q, k, v = x @ wq.T, x @ wk.T, x @ wv.T
    return _np_attention(q, k, v, scale=1 / math.sqrt(x.shape[-1]))


def _nn_multi_head_attention(
    *tensors: Tensor,
    num_heads: int,
    sources: int = 1,
    is_causal: bool = False,
    attn_mask: Any = None,
) -> Tensor:
    args, parameters = tensors[:sources], tensors[sources:]
    module = _module(nn.MultiHeadAttention, args[0].shape[-1], num_heads, True, is_causal)
    if sources == 1:
        return _with_parameters(module, parameters, args[0])
    return _with_parameters(module, parameters, *args, attn_mask=attn_mask)


def _np_heads(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, num_heads: int):
    projected = x @ weight.T + bias  # (..., T, E)
    split = projected.reshape(*projected.shape[:-1], num_heads, -1)  # (..., T, H, D)
    return np.swapaxes(split, -2, -3)  # (..., H, T, D)


def _np_multi_head_attention(
    *arrays: np.ndarray,
    num_heads: int,
    sources: int = 1,
    is_causal: bool = False,
    attn_mask: Any = None,
) -> np.ndarray:
    args, p = arrays[:sources], arrays[sources:]
    query, key, value = (args * 3)[:3] if sources == 1 else args
    q = _np_heads(query, p[0], p[1], num_heads)  # (..., H, L, D)
    k = _np_heads(key, p[2], p[3], num_heads)  # (..., H, S, D)
    v = _np_heads(value, p[4], p[5], num_heads)  # (..., H, S, D)
    masks = () if attn_mask is None else (attn_mask,)
    out = _np_attention(q, k, v, *masks, scale=1 / math.sqrt(q.shape[-1]), is_causal=is_causal)
    out = np.swapaxes(out, -2, -3)  # (..., L, H, D)
    out = out.reshape(*out.shape[:-2], -1)  # (..., L, E)
    return out @ p[6].T + p[7]


def _nn_transformer_block(x: Tensor, *parameters: Tensor, num_heads: int) -> Tensor:
    width = x.shape[-1]
    ratio = parameters[12].shape[0] // width  # mlp.0.weight is (ratio * E, E)
    module = _module(nn.TransformerBlock, width, num_heads, ratio)
    return _with_parameters(module, parameters, x)


def _np_transformer_block(x: np.ndarray, *p: np.ndarray, num_heads: int) -> np.ndarray:
    shape = (x.shape[-1],)
    h = _np_layer_norm(x, p[0], p[1], normalized_shape=shape)
    x = x + _np_multi_head_attention(h, *p[2:10], num_heads=num_heads, is_causal=True)
    h = _np_layer_norm(x, p[10], p[11], normalized_shape=shape)
    hidden = _np_gelu(h @ p[12].T + p[13], approximate="tanh")
    return x + hidden @ p[14].T + p[15]


def _linear_values(inputs: int, outputs: int, bias: bool = True) -> tuple:
    return (Values((outputs, inputs)),) + ((Values((outputs,)),) if bias else ())


def _mha_values(width: int) -> tuple:
    return sum((_linear_values(width, width) for _ in range(4)), ())


def _block_values(width: int, ratio: int) -> tuple:
    norm = (Values((width,)), Values((width,)))
    hidden = ratio * width
    mlp = _linear_values(width, hidden) + _linear_values(hidden, width)
    return norm + _mha_values(width) + norm + mlp


def _generate_linear(c: Choices) -> Case:
    batch = c.shape(max_dims=2)
    inputs, outputs = c.integer(1, 4), c.integer(1, 4)
    return Case("", (Values((*batch, inputs)), *_linear_values(inputs, outputs, c.flag())))


register(
    OpSpec(
        "nn.Linear",
        _nn_linear,
        _np_linear,
        (
            Case("x (2,3,4), Linear(4, 5)", (Values((2, 3, 4)), *_linear_values(4, 5))),
            Case("x (3,), Linear(3, 2, bias=False)", (Values((3,)), *_linear_values(3, 2, False))),
        ),
        _generate_linear,
        "nn",
        "y = x @ W.T + b, checked for x, weight and bias",
    )
)


def _generate_nn_layer_norm(c: Choices) -> Case:
    shape = _layer_norm_shape(c)
    return Case("", (Values(shape, SPREAD), Values(shape[-1:]), Values(shape[-1:])))


register(
    OpSpec(
        "nn.LayerNorm",
        _nn_layer_norm,
        _np_nn_layer_norm,
        (Case("x (2,3,4), LayerNorm(4)", (Values((2, 3, 4), SPREAD), Values((4,)), Values((4,)))),),
        _generate_nn_layer_norm,
        "nn",
    )
)


def _generate_embedding(c: Choices) -> Case:
    rows, width = c.integer(1, 5), c.integer(1, 3)
    ids = c.index_array(c.shape(max_dims=2), rows)
    return Case("", (Values((rows, width)),), {"ids": ids})


register(
    OpSpec(
        "nn.Embedding",
        _nn_embedding,
        _np_embedding,
        (
            Case(
                "Embedding(5, 3), ids (2,3) with repeats",
                (Values((5, 3)),),
                {"ids": np.array([[0, 4, 4], [2, 0, 4]])},
            ),
        ),
        _generate_embedding,
        "nn",
        "a repeated id adds up the gradients of all its positions",
    )
)


def _generate_self_attention(c: Choices) -> Case:
    width = c.integer(1, 4)
    x = Values((*c.shape(max_dims=1, max_side=2), c.integer(1, 4), width))
    return Case("", (x, *(Values((width, width)) for _ in range(3))))


register(
    OpSpec(
        "nn.SelfAttention",
        _nn_self_attention,
        _np_self_attention,
        (
            Case(
                "x (2,3,4): the article's head",
                (Values((2, 3, 4)), *(Values((4, 4)) for _ in range(3))),
            ),
        ),
        _generate_self_attention,
        "nn",
    )
)


def _generate_mha(c: Choices) -> Case:
    num_heads = c.integer(1, 2)
    width = num_heads * c.integer(1, 2)
    batch = c.shape(max_dims=1, max_side=2)
    length = c.integer(1, 3)
    if c.flag():
        x = Values((*batch, length, width))
        return Case("", (x, *_mha_values(width)), {"num_heads": num_heads, "is_causal": c.flag()})
    source = c.integer(1, 3)
    sources = (
        Values((*batch, length, width)),
        Values((*batch, source, width)),
        Values((*batch, source, width)),
    )
    mask = c.index_array((length, source), 2).astype(bool) if c.flag() else None
    params = {"num_heads": num_heads, "sources": 3, "attn_mask": mask}
    return Case("", (*sources, *_mha_values(width)), params)


register(
    OpSpec(
        "nn.MultiHeadAttention",
        _nn_multi_head_attention,
        _np_multi_head_attention,
        (
            Case("self (2,3,4), 2 heads", (Values((2, 3, 4)), *_mha_values(4)), {"num_heads": 2}),
            Case(
                "self, x (3,4), 2 heads, causal",
                (Values((3, 4)), *_mha_values(4)),
                {"num_heads": 2, "is_causal": True},
            ),
            Case(
                "cross, q (2,4), k/v (3,4), bool mask",
                (Values((2, 4)), Values((3, 4)), Values((3, 4)), *_mha_values(4)),
                {
                    "num_heads": 2,
                    "sources": 3,
                    "attn_mask": np.array([[True, False, True], [True, True, False]]),
                },
            ),
        ),
        _generate_mha,
        "nn",
        "through the fused attention op; checked for the inputs and all eight projections",
    )
)


def _generate_block(c: Choices) -> Case:
    # Width 4: a layer norm over 2 features maps every input to +-1 and is wildly
    # ill-conditioned (no model uses it); over 4 it behaves like a real block's.
    width = 4
    x = Values((*c.shape(max_dims=1, max_side=2), c.integer(1, 3), width), SPREAD)
    return Case("", (x, *_block_values(width, 2)), {"num_heads": c.pick((1, 2, 4))})


register(
    OpSpec(
        "nn.TransformerBlock",
        _nn_transformer_block,
        _np_transformer_block,
        (
            Case(
                "x (2,3,4), 2 heads, mlp_ratio=2, causal",
                (Values((2, 3, 4), SPREAD), *_block_values(4, 2)),
                {"num_heads": 2},
            ),
        ),
        _generate_block,
        "nn",
        "pre-norm block; checked for the input and all 16 parameters",
    )
)
