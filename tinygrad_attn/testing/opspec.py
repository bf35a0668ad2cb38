"""What an op-table entry is: value domains, cases, samples, choices, `OpSpec`, the registry.

How to add an op (a new row of the op table):
  1. Open the family file in `testing/op_tables/` (elementwise.py, reduce.py, movement.py, ...;
     a new family is a new file there, imported in `op_tables/__init__.py`).
  2. Write its NumPy forward (`np_...`) and, if no builder fits, a `generate(c: Choices)`.
  3. Add `register(OpSpec(name, fn, reference, cases, generate, where))` with hand-picked
     `Case`s (both sides of every broadcast, every axis form, edge values): or use a builder
     such as `binary(...)`/`unary(...)`. `tests/test_ops.py` then checks every case.

One `OpSpec` per public op (a primitive `Function`, a Tensor spelling that routes to one, a
functional composite, an nn layer). A spec holds:

- `fn(*inputs, **params)`: the op as users call it (`a + b`, `x.sum(axis=...)`);
- `reference(*arrays, **params)`: the same forward written directly in NumPy;
- `cases`: hand-picked `Case`s with readable labels;
- `generate(choices)`: one random `Case`, whose shapes, axes and flags come from a `Choices`
  source: `RandomChoices(rng)` here, or `testing.HypothesisChoices` in property tests.

A `Case` only describes its inputs (`Values`: shape, value `Domain`, requires_grad); a `Sample`
is a case with its arrays drawn. This module holds no op: the registry is empty until
`tinygrad_attn.testing.op_tables` is imported (which registers every family), so look ops up
through `op_tables`. It must not import hypothesis or pytest, and it checks nothing itself.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..tensor import Tensor

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
        shapes = " & ".join(shape_text(v.shape) for v in self.inputs)
        params = ", ".join(f"{k}={param_text(v)}" for k, v in self.params.items())
        return shapes + (f", {params}" if params else "")


def shape_text(shape: tuple) -> str:
    return str(tuple(int(n) for n in shape)).replace(" ", "")


def param_text(value: Any) -> str:
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

    `where` says where the op lives (`ops.arithmetic`, `Tensor`, `functional`, `nn`);
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
        raise ValueError(f"op tables: an op named {spec.name!r} is already registered")
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
    if not _REGISTRY:
        raise KeyError(
            f"no op named {name!r}: no op is registered; import the op tables first "
            "(`from tinygrad_attn.testing import op_tables`)"
        )
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
