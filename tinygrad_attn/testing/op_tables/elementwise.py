"""Op-table rows for the elementwise ops (ops/arithmetic.py, math_functions.py, activations.py,
clamping.py) and their Tensor spellings.

`binary` and `unary` build the usual rows of a broadcasting binary op and of an elementwise
function; a new op of this family is usually one `register(binary(...))` or `register(unary(...))`
line. The NumPy references here (`np_sigmoid`, `np_relu`, `np_erf`) are shared with the
functional rows. Test data only: nothing here checks or changes an op.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence

import numpy as np

from ...tensor import Tensor
from ..opspec import (
    AWAY_FROM_ZERO,
    NEAR_ZERO,
    NONZERO,
    POSITIVE,
    REAL,
    SATURATING,
    Case,
    Choices,
    Domain,
    OpSpec,
    Values,
    register,
)


def np_sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def np_relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def np_erf(x: np.ndarray) -> np.ndarray:
    # erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt by Simpson's rule: a reference that does
    # not share the op's math.erf.
    t = np.linspace(0.0, 1.0, 2001)
    weights = np.ones_like(t)
    weights[1:-1:2], weights[2:-1:2] = 4.0, 2.0
    x = np.asarray(x, dtype=np.float64)
    integrand = np.exp(-((x[..., None] * t) ** 2))  # (..., 2001)
    integral = (integrand * weights).sum(axis=-1) * (t[1] - t[0]) / 3.0 * x
    return 2.0 / math.sqrt(math.pi) * integral


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


# ---------------------------------------------------------------- family builders


def binary(
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

    return OpSpec(name, fn, reference, tuple(cases), generate, "ops", doc)


def unary(
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

    return OpSpec(name, fn, reference, tuple(cases), generate, "ops")


# ------------------------------------------------------------- elementwise entries

register(binary("Add", operator.add, np.add))
register(binary("Sub", operator.sub, np.subtract))
register(binary("Mul", operator.mul, np.multiply))
register(binary("Div", operator.truediv, np.true_divide, b=NONZERO))
register(binary("Pow", operator.pow, np.power, a=POSITIVE))
# a // b and a % b jump where a / b is an integer: with |a| < |b| and a away from 0, a / b
# stays in (-1, 0) or (0, 1), where central differences see no jump.
_FRACTION = Domain("fraction", 0.1, 2.4, signed=True)
_DIVISOR = Domain("divisor", 2.5, 3.5, signed=True)
register(
    binary(
        "DivRounded",
        operator.floordiv,
        np.floor_divide,
        _FRACTION,
        _DIVISOR,
        doc="a // b: a step function, so both gradients are 0 (PyTorch's div rounding_mode)",
    )
)
register(binary("Remainder", operator.mod, np.remainder, _FRACTION, _DIVISOR))
register(unary("Neg", operator.neg, np.negative))
register(unary("Exp", Tensor.exp, np.exp))
register(unary("Log", Tensor.log, np.log, POSITIVE))
register(unary("Sqrt", Tensor.sqrt, np.sqrt, POSITIVE))
register(unary("Tanh", Tensor.tanh, np.tanh, edges=[(SATURATING, "flat tails")]))
register(unary("Sigmoid", Tensor.sigmoid, np_sigmoid, edges=[(SATURATING, "flat tails")]))
_KINK = [(NEAR_ZERO, "near the kink at 0")]
register(unary("Relu", Tensor.relu, np_relu, AWAY_FROM_ZERO, _KINK))
register(unary("Abs", Tensor.abs, np.abs, AWAY_FROM_ZERO, _KINK))
register(unary("Erf", Tensor.erf, np_erf))

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


# sign and the roundings are step functions (gradient 0); values a step away from their jumps
# (0 for sign and trunc, the integers for floor and ceil, the halves for round).
_OFF_STEPS = Domain("off the steps", 0.1, 0.4, signed=True)
register(unary("Sign", Tensor.sign, np.sign, _OFF_STEPS))


def _rounded(x: Tensor, mode: str = "round") -> Tensor:
    return x.round() if mode == "round" else getattr(x, mode)()


def _np_rounded(x: np.ndarray, mode: str = "round") -> np.ndarray:
    return getattr(np, "round" if mode == "round" else mode)(x)


register(
    OpSpec(
        "Round",
        _rounded,
        _np_rounded,
        tuple(
            Case(f"(3,4) {mode}", (Values((3, 4), _OFF_STEPS),), {"mode": mode})
            for mode in ("round", "floor", "ceil", "trunc")
        ),
        lambda c: Case("", (Values(c.shape(), _OFF_STEPS),), {"mode": c.pick(("floor", "ceil"))}),
        "ops",
        "round, floor, ceil, trunc: step functions, gradient 0",
    )
)
