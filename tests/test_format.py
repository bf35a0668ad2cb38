"""tinygrad_attn.format: the one way to print a tensor or an array, and the value palette."""

import json

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import format as fmt


def test_label_names_shape_and_dtype():
    t = ta.Tensor(np.zeros((6, 6), dtype=np.float32), name="weights")
    assert fmt.label(t) == "weights (6, 6) float32"
    assert fmt.label(np.zeros(3)) == "(3,) float64"


def test_origin_has_one_wording_per_kind_of_leaf():
    w = ta.Tensor(np.ones(2), requires_grad=True)
    x = ta.Tensor(np.ones(2))
    y = (w * x).softmax(-1)
    assert fmt.origin(y, True) == "made by Softmax"
    assert fmt.origin(w, True) == fmt.LEAF_WITH_GRAD == "parameter: a leaf that requires grad"
    assert fmt.origin(x, False) == fmt.LEAF_WITHOUT_GRAD
    assert "no gradient" in fmt.LEAF_WITHOUT_GRAD


def test_stats_and_describe():
    a = np.array([[1.0, -2.0], [np.nan, np.inf]])
    line = fmt.stats(a)
    assert line.startswith("shape (2, 2) float64") and "min -2" in line and "max 1" in line
    assert line.endswith("NaN 1  Inf 1")
    assert fmt.describe(np.float64(0.5)) == "0.5"
    assert fmt.describe(np.arange(3.0)) == "[0., 1., 2.]"
    assert fmt.describe(np.zeros(100)).startswith("shape (100,)")  # more than SMALL: stats
    assert "released" in fmt.describe(None)


def test_summary_is_plain_data_that_json_can_carry():
    s = fmt.summary(np.array([[1.0, np.nan], [3.0, -np.inf]]))
    assert s["shape"] == [2, 2] and s["nan"] == 1 and s["inf"] == 1
    assert s["rows"] == [[1.0, "NaN"], [3.0, "-Inf"]]
    assert s["stats"]["max"] == 3.0
    json.dumps(s, allow_nan=False)
    assert "rows" not in fmt.summary(np.zeros(65))  # large: statistics only
    assert fmt.summary(None) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [(-1.0, fmt.NEGATIVE), (0.0, fmt.ZERO), (1.0, fmt.POSITIVE), (5.0, fmt.POSITIVE)],
)
def test_signed_values_go_purple_white_orange(value, expected):
    assert fmt.value_colour(value, 1.0) == expected


def test_halfway_colours_and_weights():
    half = fmt.value_colour(0.5, 1.0)
    assert half not in (fmt.ZERO, fmt.POSITIVE)
    r, g, b = (int(half[i : i + 2], 16) for i in (1, 3, 5))
    assert r > g > b  # an orange tint
    assert fmt.weight_colour(0.0) == fmt.ZERO and fmt.weight_colour(1.0) == fmt.POSITIVE
    assert fmt.value_colour(float("nan"), 1.0) == fmt.ZERO
    assert fmt.value_colour(1.0, 0.0) == fmt.ZERO  # an all-zero array is all white
    # the palette never reuses the pass colours
    from tinygrad_attn.viz import BLUE, GREEN, RED

    assert not {fmt.NEGATIVE, fmt.ZERO, fmt.POSITIVE} & {GREEN, RED, BLUE}
