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
from tinygrad_attn import Tensor, op_registry  # noqa: E402
from tinygrad_attn.testing import arrays_in, broadcastable_arrays, op_samples  # noqa: E402

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

every_op = pytest.mark.parametrize("name", op_registry.names())


def _as_float64(value):
    """The same values, in float64: float32 inputs rounded once, so only the op's own
    arithmetic differs between the two runs."""
    if isinstance(value, Tensor):
        return Tensor(value.data, dtype=np.float64, requires_grad=value.requires_grad)
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    return value


def _close_in_float32(actual, expected, what):
    scale = float(np.max(np.abs(expected), initial=1.0))
    np.testing.assert_allclose(actual, expected, rtol=2e-4, atol=2e-5 * scale, err_msg=what)


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
    out32, out64 = sample.call(*single), sample.call(*double)
    assert out32.dtype == np.float32 and out64.dtype == np.float64
    _close_in_float32(out32.data, out64.data, "forward")
    # An upstream gradient that is not all ones, so a wrong reduction cannot hide.
    upstream = np.cos(np.arange(out64.size)).reshape(out64.shape) + 1.5
    out32.backward(upstream.astype(np.float32))
    out64.backward(upstream)
    for i, (a, b) in enumerate(zip(single, double)):
        if isinstance(a, Tensor) and a.requires_grad:
            assert a.grad.dtype == np.float32
            _close_in_float32(a.grad, b.grad, f"gradient of input {i}")


@every_op
@PROFILE
@given(data=st.data())
def test_forward_matches_numpy(name, data):
    sample = data.draw(op_samples(name), label="sample")
    out = sample.call(*sample.inputs())
    expected = sample.reference()
    assert out.shape == expected.shape
    np.testing.assert_allclose(out.data, expected, rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------- the strategies themselves


@PROFILE
@given(arrays=broadcastable_arrays(3, "nonzero"))
def test_broadcastable_arrays_broadcast_and_respect_the_domain(arrays):
    np.broadcast_shapes(*(a.shape for a in arrays))
    for a in arrays:
        assert a.dtype == np.float64
        assert np.all((np.abs(a) >= 0.5) & (np.abs(a) <= 2.0))


@PROFILE
@given(values=arrays_in((3, 4), "distinct"))
def test_distinct_arrays_have_no_ties(values):
    assert np.unique(values).size == values.size


def test_unknown_domain_is_a_clear_error():
    with pytest.raises(ValueError, match="known: real"):
        arrays_in((2,), "complex")
