"""testing's hypothesis strategies (testing/strategies.py): arrays in a domain, broadcastable
arrays, whole samples of one op by name or spec, and the error for an unknown domain."""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402

from tinygrad_attn.testing import arrays_in, broadcastable_arrays  # noqa: E402

PROFILE = settings(max_examples=10, deadline=None, derandomize=True)


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
