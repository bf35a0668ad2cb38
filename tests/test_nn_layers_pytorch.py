"""nn layers and nn.init as PyTorch 2.13's (issue 27): nn.RMSNorm, Embedding(padding_idx=),
Embedding.from_pretrained, the loss modules' signatures and buffers, and the nn.init functions
(PyTorch's signatures; in place, through views; trunc_normal_ inside [a, b]). What PyTorch gives
for the same calls is written here; tests/test_nn_vs_torch.py compares directly with torch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import nn


# ----------------------------------------------------------------------------------- RMSNorm
def test_rms_norm_module_as_pytorch():
    layer = nn.RMSNorm(4)
    assert repr(layer) == "RMSNorm((4,), eps=None, elementwise_affine=True)"
    assert list(layer.state_dict()) == ["weight"] and isinstance(layer.weight, nn.Parameter)
    np.testing.assert_array_equal(layer.weight.numpy(), np.ones(4))
    bare = nn.RMSNorm([3, 4], eps=1e-6, elementwise_affine=False)
    assert repr(bare) == "RMSNorm((3, 4), eps=1e-06, elementwise_affine=False)"
    assert bare.weight is None and list(bare.parameters()) == []
    x = ta.tensor([[3.0, 4.0, 0.0, 0.0]], dtype=ta.float64)
    rms = math.sqrt(25 / 4 + np.finfo(np.float64).eps)  # eps=None: the dtype's epsilon
    np.testing.assert_allclose(layer.double()(x).numpy(), [[3 / rms, 4 / rms, 0.0, 0.0]])
    assert repr(nn.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"


# --------------------------------------------------------------------------------- Embedding
def test_embedding_padding_idx_row_is_zero_and_gets_no_gradient():
    layer = nn.Embedding(5, 3, padding_idx=-1)
    assert layer.padding_idx == 4 and repr(layer) == "Embedding(5, 3, padding_idx=4)"
    np.testing.assert_array_equal(layer.weight.numpy()[4], np.zeros(3))
    assert layer.weight.numpy()[:4].any()
    layer(np.array([[4, 1], [4, 4]])).sum().backward()
    np.testing.assert_array_equal(layer.weight.grad.numpy()[:, 0], [0.0, 1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="padding_idx=5 must be within num_embeddings=5"):
        nn.Embedding(5, 3, padding_idx=5)


def test_embedding_from_pretrained_shares_and_freezes():
    table = ta.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    layer = nn.Embedding.from_pretrained(table, padding_idx=1)
    assert not layer.weight.requires_grad and isinstance(layer.weight, nn.Parameter)
    assert np.shares_memory(layer.weight.numpy(), table.numpy())
    np.testing.assert_array_equal(layer.weight.numpy()[1], [3.0, 4.0])  # kept, as PyTorch
    assert repr(layer) == "Embedding(3, 2, padding_idx=1)"
    np.testing.assert_array_equal(layer(np.array([2, 0])).numpy(), [[5.0, 6.0], [1.0, 2.0]])
    trained = nn.Embedding.from_pretrained(table, freeze=False)
    assert trained.weight.requires_grad
    trained(np.array([1, 1])).sum().backward()
    np.testing.assert_array_equal(trained.weight.grad.numpy()[1], [2.0, 2.0])
    with pytest.raises(ValueError, match="2-D"):
        nn.Embedding.from_pretrained(ta.ones(3))


def test_embedding_out_of_range_is_an_index_error():
    with pytest.raises(IndexError, match="out of range in self"):
        nn.Embedding(5, 2)(np.array([-1]))


# ------------------------------------------------------------------------------ loss modules
def test_loss_modules_have_pytorchs_signatures_reprs_and_buffers():
    weight = ta.tensor([1.0, 2.0, 3.0])
    loss = nn.CrossEntropyLoss(weight, None, 1, None, "sum", 0.1)  # PyTorch's positional order
    assert loss.ignore_index == 1 and loss.reduction == "sum" and loss.label_smoothing == 0.1
    assert list(loss.state_dict()) == ["weight"] and repr(loss) == "CrossEntropyLoss()"
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    assert list(nn.BCEWithLogitsLoss(pos_weight=ta.ones(2)).state_dict()) == ["pos_weight"]
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert nn.MSELoss(False).reduction == "sum"  # the first positional is size_average
    assert nn.SmoothL1Loss(None, None, "none", 0.5).beta == 0.5


# ----------------------------------------------------------------------------------- nn.init
def test_init_writes_through_a_view_in_place():
    w = ta.ones(3, 2, requires_grad=True)
    before = w._version
    assert nn.init.zeros_(w[0]).shape == (2,)
    np.testing.assert_array_equal(w.numpy(), [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    assert w._version > before and w.requires_grad and w.is_leaf
    nn.init.constant_(w[:, 1], 7.0)
    np.testing.assert_array_equal(w.numpy()[:, 1], [7.0, 7.0, 7.0])
    counts = ta.zeros(2, dtype=ta.int64)
    np.testing.assert_array_equal(nn.init.constant_(counts, 3).numpy(), [3, 3])


def test_trunc_normal_stays_in_a_b_with_pytorchs_signature():
    ta.manual_seed(0)
    x = nn.init.trunc_normal_(ta.empty(100_000), mean=1.0, std=2.0, a=0.0, b=3.0)
    values = x.numpy()
    assert values.min() >= 0.0 and values.max() <= 3.0
    # the truncated normal's mean (PyTorch's draws: 1.4158)
    alpha, beta = (0.0 - 1.0) / 2.0, (3.0 - 1.0) / 2.0
    pdf = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    mean = 1.0 + 2.0 * (pdf(alpha) - pdf(beta)) / (cdf(beta) - cdf(alpha))
    assert values.mean() == pytest.approx(mean, abs=0.02)
    with pytest.warns(UserWarning, match="more than 2 std"):  # (PyTorch warns too)
        tail = nn.init.trunc_normal_(ta.empty(2000), 0.0, 1.0, 3.0, 4.0)  # 0.13% of the mass
    assert tail.numpy().min() >= 3.0 and tail.numpy().max() <= 4.0
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        nn.init.trunc_normal_(ta.empty(10), mean=10.0)
    generator = ta.Generator().manual_seed(3)
    first = nn.init.trunc_normal_(ta.empty(5), generator=generator).numpy().copy()
    again = nn.init.trunc_normal_(ta.empty(5), generator=ta.Generator().manual_seed(3))
    np.testing.assert_array_equal(first, again.numpy())


def test_eye_dirac_orthogonal_sparse_as_pytorch():
    np.testing.assert_array_equal(nn.init.eye_(ta.empty(2, 3)).numpy(), np.eye(2, 3))
    with pytest.raises(ValueError, match="2 dimensions"):
        nn.init.eye_(ta.empty(2))
    dirac = nn.init.dirac_(ta.empty(4, 2, 3)).numpy()
    assert dirac[0, 0, 1] == 1 and dirac[1, 1, 1] == 1 and dirac.sum() == 2
    with pytest.raises(ValueError, match="3, 4, or 5 dimensions"):
        nn.init.dirac_(ta.empty(2, 2))
    wide = nn.init.orthogonal_(ta.empty(3, 5), gain=2.0).numpy()
    np.testing.assert_allclose(wide @ wide.T, 4 * np.eye(3), atol=1e-5)
    tall = nn.init.orthogonal_(ta.empty(5, 3)).numpy()
    np.testing.assert_allclose(tall.T @ tall, np.eye(3), atol=1e-5)
    sparse = nn.init.sparse_(ta.empty(10, 4), 0.3).numpy()
    np.testing.assert_array_equal((sparse == 0).sum(0), [3, 3, 3, 3])


def test_kaiming_xavier_and_gain_as_pytorch():
    ta.manual_seed(0)
    w = nn.init.kaiming_normal_(ta.empty(400, 300), mode="fan_out", nonlinearity="relu")
    assert w.numpy().std() == pytest.approx(math.sqrt(2 / 400), rel=0.02)
    w = nn.init.xavier_normal_(ta.empty(400, 300), gain=2.0)
    assert w.numpy().std() == pytest.approx(2 * math.sqrt(2 / 700), rel=0.02)
    assert nn.init.calculate_gain("leaky_relu", 0.2) == pytest.approx(1.3867504905630728)
    assert (
        nn.init.calculate_gain("selu") == 0.75 and nn.init.calculate_gain("conv_transpose2d") == 1
    )
    with pytest.raises(ValueError, match="unsupported nonlinearity"):
        nn.init.calculate_gain("foo")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init.kaiming_normal_(ta.empty(3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.init.kaiming_normal_(ta.empty(0, 3))
    assert "zero-element" in str(caught[0].message)


@pytest.mark.parametrize(
    "name",
    "uniform normal constant eye dirac xavier_uniform xavier_normal kaiming_uniform "
    "kaiming_normal orthogonal sparse".split(),
)
def test_the_deprecated_init_names_warn_and_are_the_inplace_functions(name):
    args = {"constant": (0.3,), "sparse": (0.5,)}.get(name, ())
    shape = (2, 2, 3) if name == "dirac" else (3, 4)
    old, new = ta.zeros(shape), ta.zeros(shape)
    ta.manual_seed(0)
    with pytest.warns(FutureWarning, match=f"nn.init.{name}_"):
        assert getattr(nn.init, name)(old, *args) is old
    ta.manual_seed(0)
    getattr(nn.init, name + "_")(new, *args)
    np.testing.assert_array_equal(old.numpy(), new.numpy())
