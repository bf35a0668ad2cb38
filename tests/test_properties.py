"""Property tests: every registered op on hypothesis-drawn shapes, axes and values.

For each op, three properties, on inputs drawn by the op's own generator through
`testing.HypothesisChoices` (mutually broadcastable shapes, axes, index arrays, values from
the op's domain): gradients match central differences in float64; float32 agrees with
float64 within float32 tolerance (forward and gradients); the forward matches NumPy.

The default profile is small and derandomized, so CI is fast and repeatable; set
TINYGRAD_ATTN_HYPOTHESIS=thorough to search much harder.
"""

import os

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import tinygrad_attn as ta  # noqa: E402
from tinygrad_attn import Tensor  # noqa: E402
from tinygrad_attn.testing import op_samples, op_tables  # noqa: E402

settings.register_profile(
    "tinygrad_attn-fast",
    max_examples=6,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "tinygrad_attn-thorough",
    parent=settings.get_profile("tinygrad_attn-fast"),
    max_examples=200,
    derandomize=False,
)
PROFILE = settings(
    settings.get_profile("tinygrad_attn-" + os.environ.get("TINYGRAD_ATTN_HYPOTHESIS", "fast"))
)

every_op = pytest.mark.parametrize("name", op_tables.names())


def _as_float64(value, rng=None):
    """The same values in float64 (float32 inputs rounded once, so only the op's own
    arithmetic differs between the runs); with `rng`, each float element is also moved by up
    to float32's relative precision, 2**-24."""
    if isinstance(value, Tensor) or (isinstance(value, np.ndarray) and value.dtype.kind == "f"):
        data = np.asarray(value.numpy() if isinstance(value, Tensor) else value, dtype=np.float64)
        if rng is not None and data.dtype.kind == "f":
            data = data * (1 + rng.uniform(-1, 1, data.shape) * 2.0**-24)
        if isinstance(value, Tensor):
            return Tensor(data, dtype=np.float64, requires_grad=value.requires_grad)
        return data
    return value


def _forward_backward(sample, inputs, upstream):
    """{"forward": output, "gradient of input i": its gradient, ...} of one pass."""
    out = sample.call(*inputs)
    out.backward(upstream.astype(out.dtype))
    results = {"forward": out.numpy()}
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad:
            results[f"gradient of input {i}"] = t.grad
    return results


@every_op
@PROFILE
@given(data=st.data())
def test_gradients_match_central_differences(name, data):
    sample = data.draw(op_samples(name), label="sample")
    assert ta.gradcheck(sample.call, sample.inputs(), **sample.spec.gradcheck_options)


@every_op
@PROFILE
@given(data=st.data())
def test_float32_agrees_with_float64(name, data):
    sample = data.draw(op_samples(name), label="sample")
    single = sample.inputs(np.float32)
    double = [_as_float64(v) for v in single]
    # An upstream gradient that is not all ones, so a wrong reduction cannot hide.
    shape = sample.call(*double).shape
    upstream = (np.cos(np.arange(int(np.prod(shape)))) + 1.5).reshape(shape)
    results32 = _forward_backward(sample, single, upstream)
    results64 = _forward_backward(sample, double, upstream)
    assert all(r.dtype == np.float32 for r in results32.values())
    assert all(r.dtype == np.float64 for r in results64.values())
    # float32 rounding errors scale with the largest quantities in the pass, not with each
    # result (a small gradient can be the difference of large terms): one scale for all.
    scale = max(float(np.max(np.abs(r), initial=1.0)) for r in results64.values())
    # Where the op is ill-conditioned (layer norm of nearly equal values, saturated attention)
    # even exact arithmetic on float32-rounded values moves the result: measure how far, by
    # nudging the inputs at float32's precision, and allow a few times that on top.
    rng = np.random.default_rng(0)
    spread = {what: np.zeros_like(r) for what, r in results64.items()}
    for _ in range(2):
        nudged = _forward_backward(sample, [_as_float64(v, rng) for v in double], upstream)
        for what, r in results64.items():
            spread[what] = np.maximum(spread[what], np.abs(nudged[what] - r))
    for what, r64 in results64.items():
        allowed = 1e-5 * scale + 2e-5 * np.abs(r64) + 8 * spread[what]
        error = np.abs(results32[what] - r64)
        worst = np.unravel_index(int(np.argmax(error - allowed)), error.shape) if error.size else ()
        assert np.all(error <= allowed), (
            f"{what}: float32 differs from float64 by {error[worst]:.3g} at {worst} "
            f"(allowed there: {allowed[worst]:.3g})"
        )


@every_op
@PROFILE
@given(data=st.data())
def test_forward_matches_numpy(name, data):
    sample = data.draw(op_samples(name), label="sample")
    out = sample.call(*sample.inputs())
    expected = sample.reference()
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-9, atol=1e-12)
