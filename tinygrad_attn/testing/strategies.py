"""hypothesis strategies for tinygrad_attn's ops and for users' own ops.

`arrays_in(shape, domain)` and `broadcastable_arrays(num, domain)` draw float64 arrays from a
value `Domain`; `HypothesisChoices` feeds an op-table generator from hypothesis, and
`op_samples(op)` draws whole samples of one op, so a failing property shrinks to a small case.
hypothesis is imported only when a strategy is asked for, and the op tables only when
`op_samples` is given a name.

This module generates; it must not check anything or change the graph or any op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import opspec
from .opspec import Domain, OpSpec, Sample, Values


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
        return opspec.DOMAINS[domain]
    except KeyError:
        raise ValueError(f"unknown domain {domain!r}; known: {', '.join(opspec.DOMAINS)}") from None


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
    """`opspec.Choices` drawn from hypothesis: `spec.sample(HypothesisChoices(draw))`."""

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


def op_samples(op: str | OpSpec) -> Any:
    """A strategy for `Sample`s of one registered op (by name or spec): random
    shapes, axes, parameters and values from the op's generator, shrinking on failure."""
    st, _ = _hypothesis()
    if isinstance(op, OpSpec):
        spec = op
    else:
        from . import op_tables  # a name needs every family registered: load them only now

        spec = op_tables.get(op)

    @st.composite
    def draw_sample(draw: Callable) -> Sample:
        return spec.sample(HypothesisChoices(draw))

    return draw_sample()
