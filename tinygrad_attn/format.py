"""The one way to print a tensor or an array, and the colours of values.

Every tool that shows an array to a person goes through here, so a tensor reads the same in
`BackwardStep`, `explain()`, the graph and the replay page:

- `label(t)`: `weights (6, 6) float32`, or `(6, 6) float32` for an unnamed tensor;
- `origin(t, needs_grad)`: where a tensor came from (`made by Softmax`, `LEAF_WITH_GRAD`,
  `LEAF_WITHOUT_GRAD`);
- `stats(a)`: one line of min / mean / max / norm over the finite values, with NaN/Inf counts;
- `describe(a)`: a small array in full, a large one as `stats`;
- `summary(a)`: the same facts as plain data (a dict that JSON can carry), for pages.

The palette is shared by every picture of values (graph heat maps, the replay page, the training
page), so a learner learns it once: `value_colour(v, scale)` diverges purple (negative) -> white
(zero) -> orange (positive); `weight_colour(v)` goes white -> orange for values that are never
negative (attention weights). Neither reuses the pass colours (green forward, red backward, blue
no gradient).

This module only formats: it reads arrays and the attributes every tensor has (`name`, `shape`,
`dtype`, `grad_fn`), and imports nothing from the package.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "LEAF_WITHOUT_GRAD",
    "LEAF_WITH_GRAD",
    "NEGATIVE",
    "POSITIVE",
    "SMALL",
    "ZERO",
    "describe",
    "label",
    "number",
    "origin",
    "shape_text",
    "stats",
    "summary",
    "value_colour",
    "weight_colour",
]

SMALL = 64  # arrays with at most this many elements are shown in full

# The one wording for the two kinds of leaf, everywhere a leaf is described.
LEAF_WITH_GRAD = "parameter: a leaf that requires grad"
LEAF_WITHOUT_GRAD = "input or constant: a leaf that takes no gradient"

# The value palette (hex, so SVG, PNG and HTML agree).
NEGATIVE = "#5e3c99"  # purple
ZERO = "#f7f7f7"  # near white
POSITIVE = "#e66101"  # orange


# ----------------------------------------------------------------------------- text
def shape_text(shape: Any, dtype: Any) -> str:
    """`(6, 6) float32`."""
    return f"{tuple(shape)} {np.dtype(dtype).name}"


def label(t: Any) -> str:
    """`weights (6, 6) float32`, or `(6, 6) float32` when `t` has no name.

    `t` is anything with `shape` and `dtype` (a Tensor, the record a released graph keeps of
    one, an ndarray); a `name` attribute is used when there is one.
    """
    name = getattr(t, "name", None)
    text = shape_text(t.shape, t.dtype)
    return f"{name} {text}" if name else text


def short_label(t: Any) -> str:
    """`weights (6, 6)`, or `(6, 6)`: the name and shape alone, for one-line records."""
    name = getattr(t, "name", None)
    return f"{name} {tuple(t.shape)}" if name else f"{tuple(t.shape)}"


def norm(array: Any) -> str:
    """The norm of a gradient to 3 digits, or `-` where none flows (None)."""
    return "-" if array is None else f"{float(np.linalg.norm(array)):.3g}"


def in_place(node: Any) -> str | None:
    """`mul_` for a node that stands for a tensor changed in place by `mul_()` (`+=` for an
    operator), None for an ordinary op."""
    method = getattr(node, "inplace", None)
    return method.removesuffix("()") if method else None


def op_text(node: Any) -> str:
    """The op's name, and how it was called when that was in place: `Mul (mul_, in place)`."""
    method = in_place(node)
    name = getattr(node, "name", type(node).__name__)
    return f"{name} ({method}, in place)" if method else name


def step_line(step: Any) -> str:
    """One backward step in one line: `step 2: Softmax -> weights (6, 6) |grad_out|=0.41 =>
    scores (6, 6) |grad|=0.12` (the output, then each input with the norm of its gradient).
    An op recorded in place says so: `step 4: Mul (mul_, in place) -> ...`."""
    ins = ", ".join(
        f"{short_label(t)} |grad|={norm(g)}" for t, g in zip(step.inputs, step.grad_inputs)
    )
    return (
        f"step {step.index}: {op_text(step.node)} -> {short_label(step.output)} "
        f"|grad_out|={norm(step.grad_output)} => {ins}"
    )


def origin(t: Any, needs_grad: bool) -> str:
    """Where `t` came from: `made by Softmax` for an op's result, else which kind of leaf it
    is (`LEAF_WITH_GRAD` or `LEAF_WITHOUT_GRAD`). `needs_grad`: whether the op that reads `t`
    asked for its gradient (for a leaf, whether it requires grad)."""
    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        return f"made by {getattr(grad_fn, 'name', type(grad_fn).__name__)}"
    return LEAF_WITH_GRAD if needs_grad else LEAF_WITHOUT_GRAD


def stats(array: Any) -> str:
    """One line: `shape (6, 6) float32  min -0.3  mean 0.01  max 0.4  norm 1.2`, over the
    finite values, with `NaN n  Inf m` appended when there are any."""
    a = np.asarray(array)
    head = f"shape {a.shape} {a.dtype}"
    if a.size == 0 or a.dtype.kind not in "fciub":
        return head
    values = a.astype(np.float64)
    finite = np.isfinite(values)
    nan = int(np.isnan(values).sum())
    inf = int(a.size - finite.sum() - nan)
    body = head
    if finite.any():
        ok = values[finite]
        body += (
            f"  min {ok.min():.4g}  mean {ok.mean():.4g}  max {ok.max():.4g}"
            f"  norm {np.linalg.norm(ok):.4g}"
        )
    if nan or inf:
        body += f"  NaN {nan}  Inf {inf}"
    return body


def describe(array: Any, indent: str = "", small: int = SMALL) -> str:
    """An array of at most `small` elements in full (4 digits; continuation lines start with
    `indent`), a larger one as `stats`; `None` (an array a released graph no longer holds)
    says so."""
    if array is None:
        return "(released: the graph no longer holds this array)"
    a = np.asarray(array)
    if a.ndim == 0:
        return f"{a.item():.4g}" if a.dtype.kind in "fc" else str(a.item())
    if a.size > small:
        return stats(a)
    body = np.array2string(a, precision=4, suppress_small=True, separator=", ")
    return body.replace("\n", "\n" + indent)


# ----------------------------------------------------------------------------- data
def number(value: float) -> float | str:
    """A float rounded to 4 significant digits; NaN and Inf as text (JSON has neither)."""
    if np.isnan(value):
        return "NaN"
    if np.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    return float(f"{value:.4g}")


def summary(array: Any, small: int = SMALL) -> dict | None:
    """What a page shows of an array, as plain data: `shape`, `dtype`, `nan`, `inf`, `stats`
    (min, mean, max, norm over the finite values, if any) and, for at most `small` elements,
    `rows` (every value, the last axis across; 0-D and 1-D arrays are one row). None for None.
    """
    if array is None:
        return None
    a = np.asarray(array)
    values = a.astype(np.float64)
    finite = values[np.isfinite(values)]
    result: dict[str, Any] = {
        "shape": list(a.shape),
        "dtype": a.dtype.name,
        "nan": int(np.isnan(values).sum()),
        "inf": int(np.isinf(values).sum()),
    }
    if finite.size:
        result["stats"] = {
            "min": number(finite.min()),
            "mean": number(finite.mean()),
            "max": number(finite.max()),
            "norm": number(np.linalg.norm(finite)),
        }
    if a.size <= small:
        rows = values.reshape(1, -1) if a.ndim < 2 else values.reshape(-1, a.shape[-1])  # (R, C)
        result["rows"] = [[number(v) for v in row] for row in rows]
    return result


# ----------------------------------------------------------------------------- colours
def _mix(a: str, b: str, t: float) -> str:
    """The colour a fraction `t` (0..1) of the way from hex `a` to hex `b`."""
    ca = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    cb = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(ca, cb))


def value_colour(value: float, scale: float) -> str:
    """The colour of a signed value: purple for -scale, white for 0, orange for +scale
    (clipped beyond; NaN/Inf and a zero scale give white). Use the array's largest absolute
    value as `scale`, so the table uses the whole palette."""
    if not np.isfinite(value) or not scale > 0:
        return ZERO
    t = float(min(1.0, abs(value) / scale))
    return _mix(ZERO, POSITIVE if value > 0 else NEGATIVE, t)


def weight_colour(value: float, top: float = 1.0) -> str:
    """The colour of a value that is never negative (an attention weight): white for 0,
    orange for `top` and above."""
    if not np.isfinite(value) or not top > 0:
        return ZERO
    return _mix(ZERO, POSITIVE, float(min(1.0, max(0.0, value / top))))
