"""erf and erfc in float32, in NumPy passes: NumPy has neither, and `math.erf` called per
element costs about 90 ns an element. Both come from polynomials computed here at import, one
fitted to `math.erfc`, the other erf's own Taylor series (no table of coefficients is copied):

- erfc(z) = t exp(-z^2) poly(t) with t = 1 / (1 + z/2), for z >= 0 (`ERFC_POLY`);
- erf(x) = x S(x^2) near 0 (`ERF_SERIES`), where 1 - erfc(|x|) would cancel.

Used by `Erf` (ops/math_functions.py) and the exact `GELU` (ops/layers.py) for float32 arrays;
float64 keeps `math.erf`, exact, which gradcheck needs. Must not define ops.
"""

from __future__ import annotations

import math

import numpy as np


def _erfc_factor(t: float) -> float:
    """erfc(z) exp(z^2) / t at t = 1 / (1 + z/2): smooth on (0, 1], so a polynomial in t gives
    erfc(z) = t exp(-z^2) poly(t) to float32's resolution for every z >= 0."""
    z = 2 / t - 2
    return math.erfc(z) * math.exp(z * z) / t


# Its degree-8 interpolant (z from 0 to 10), fitted here from math.erfc, in powers of t
# (within 6e-8 of erfc; the coefficients stay below 1: Horner's rule in float32 loses nothing).
ERFC_POLY = [
    float(c)
    for c in np.polynomial.Chebyshev.interpolate(np.vectorize(_erfc_factor), 8, domain=[1 / 6, 1])
    .convert(kind=np.polynomial.Polynomial)
    .coef[::-1]
]

# Below SERIES_END, erf(x) = x S(x^2) with S's first 9 Taylor terms: the next is under float32's
# resolution there; above it, 1 - erfc(|x|) loses nothing (erf > 0.7).
SERIES_END = 0.75
ERF_SERIES = [  # the coefficient of x^(2n), from the highest n down, as Horner's rule takes them
    2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(8, -1, -1)
]


def erfc_into(p: np.ndarray, a: np.ndarray, t: np.ndarray, coefficients: list = ERFC_POLY) -> None:
    """p = erfc(a) = t exp(-a^2) poly(t) on one block of a >= 0 (times k, with `coefficients`
    ERFC_POLY times k); `a` is left holding exp(-a^2), `t` holding t = 1 / (1 + a/2)."""
    np.multiply(a, 0.5, out=t)
    t += 1
    np.reciprocal(t, out=t)
    p.fill(coefficients[0])
    for c in coefficients[1:]:
        p *= t
        p += c
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a
    p *= t


def erf_float32(
    x: np.ndarray, out: np.ndarray, t: np.ndarray, a: np.ndarray, s: np.ndarray, u: np.ndarray
) -> None:
    """out = erf(x) on one block of float32 values (ops/_util.blockwise), within 2e-7
    (relative) of math.erf at the same inputs (tests/test_ops.py compares). Both forms are
    computed for every element and blended with a 0/1 weight, in arithmetic: a choice per
    element (np.where) would cost more than all of these passes."""
    np.clip(x, -SERIES_END, SERIES_END, out=s)
    np.multiply(s, s, out=t)
    out.fill(ERF_SERIES[0])
    for c in ERF_SERIES[1:]:
        out *= t
        out += c
    out *= s  # x S(x^2), x clipped to the series' range (finite everywhere)
    np.abs(x, out=a)
    np.less(a, SERIES_END, out=s, casting="unsafe")  # the series' weight: 1.0 or 0.0
    out *= s
    np.subtract(1, s, out=s)  # the other form's weight
    erfc_into(u, a, t)  # erfc(|x|)
    np.subtract(1, u, out=u)
    np.copysign(u, x, out=u)  # erf(x) = sign(x) (1 - erfc(|x|))
    u *= s
    out += u
