"""F.* as PyTorch 2.13 means it (issues 24 and 27): cross_entropy's signature, weights, class
axis and probability targets; nll_loss; the activations' Number arguments, inplace=True and
softmax's dim and dtype; scaled_dot_product_attention(enable_gqa=True); rms_norm; embedding's
errors and options; the reductions' edge cases (std's gradient at zero spread, empty prod and
logsumexp, float32 var with a large offset). The numbers were computed by PyTorch 2.13 on the
same float64 inputs and are written here; tests/test_nn_vs_torch.py compares more cases directly
when torch is installed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.nn.functional as F  # noqa: N812  (issue 27: PyTorch's import line)

LOGITS = [[0.2, -1.0, 0.5, 1.5], [1.0, 0.0, -0.5, 0.3], [-0.7, 0.9, 0.1, 0.0]]  # (N=3, C=4)
WEIGHT = [1.0, 2.0, 0.5, 3.0]
PROBS = [[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]]


def _logits() -> ta.Tensor:
    return ta.tensor(LOGITS, dtype=ta.float64, requires_grad=True)


# --------------------------------------------------------------------------- cross_entropy
# F.cross_entropy(L, t, w, reduction=..., label_smoothing=...), PyTorch 2.13, float64
TORCH_WEIGHTED = {
    ("mean", 0.0): 0.6351010718430975,
    ("mean", 0.2): 0.7527412302818967,
    ("sum", 0.0): 3.810606431058585,
    ("sum", 0.2): 4.516447381691379,
    ("none", 0.0): [1.6313236105998756, 0.7360126402358012, 1.4432701802229082],
    ("none", 0.2): [1.8217856129615537, 1.0705142202652764, 1.6241475484645493],
}


@pytest.mark.parametrize("fn", [F.cross_entropy, F.cross_entropy_composed])
@pytest.mark.parametrize("reduction, smoothing", list(TORCH_WEIGHTED))
def test_cross_entropy_class_weights_as_pytorch(fn, reduction, smoothing):
    weight = ta.tensor(WEIGHT, dtype=ta.float64)
    target = np.array([3, 0, 1])
    loss = fn(_logits(), target, weight, reduction=reduction, label_smoothing=smoothing)
    np.testing.assert_allclose(loss.numpy(), TORCH_WEIGHTED[(reduction, smoothing)], rtol=1e-13)


def test_cross_entropy_weighted_mean_with_an_ignored_target_and_its_gradient():
    logits = _logits()
    target = np.array([3, -100, 1])
    loss = F.cross_entropy(logits, target, ta.tensor(WEIGHT, dtype=ta.float64), label_smoothing=0.2)
    loss.backward()
    assert loss.item() == pytest.approx(0.6891866322852206, rel=1e-13)
    expected = [
        [0.07622940612158172, 0.005971798020447013, 0.11139752332526516, -0.19359872746729384],
        [0.0, 0.0, 0.0, 0.0],
        [0.027773516832179813, -0.1529065463467788, 0.0790665077231153, 0.0460665217914837],
    ]
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-12, atol=1e-16)


@pytest.mark.parametrize(
    "reduction, plain, weighted_smoothed",
    [
        ("mean", 1.7771407557379604, 2.3495019299167845),
        ("sum", 5.331422267213881, 7.048505789750354),
        (
            "none",
            [1.4737745368666253, 1.536012640235801, 2.321635090111454],
            [2.315747966123758, 2.4085205403831766, 2.32423728324342],
        ),
    ],
)
def test_cross_entropy_probability_targets_as_pytorch(reduction, plain, weighted_smoothed):
    probs = ta.tensor(PROBS, dtype=ta.float64)
    weight = ta.tensor(WEIGHT, dtype=ta.float64)
    np.testing.assert_allclose(
        F.cross_entropy(_logits(), probs, reduction=reduction).numpy(), plain, rtol=1e-13
    )
    loss = F.cross_entropy(_logits(), probs, weight, reduction=reduction, label_smoothing=0.1)
    np.testing.assert_allclose(loss.numpy(), weighted_smoothed, rtol=1e-13)


def test_cross_entropy_probability_targets_gradient_as_pytorch():
    logits = _logits()
    weight = ta.tensor(WEIGHT, dtype=ta.float64)
    F.cross_entropy(
        logits, ta.tensor(PROBS, dtype=ta.float64), weight, label_smoothing=0.1
    ).backward()
    expected = [
        [0.05804846464048354, -0.10763702698326182, 0.08093515221830097, -0.03134658987552265],
        [0.17613590820411554, -0.07121326708869198, 0.01622874675117593, -0.12115138786659935],
        [-0.27358496828208567, 0.155443112126881, 0.07316724195308226, 0.044974614202122454],
    ]
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-12)


def test_cross_entropy_class_axis_is_1_as_pytorch_and_axis_names_another():
    x = (np.arange(2 * 4 * 3).reshape(2, 4, 3) * 0.53) % 1.7 - 0.6  # (N=2, C=4, d=3)
    target = np.array([[0, 3, 1], [2, 2, 0]])
    expected = [  # PyTorch 2.13, reduction="none"
        [2.655496133657783, 1.5588439375730143, 1.3388439375730148],
        [1.4488439375730144, 1.1754961336577825, 1.2288439375730156],
    ]
    got = F.cross_entropy(ta.tensor(x), target, reduction="none")
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-13)
    class_last = ta.tensor(np.moveaxis(x, 1, -1))  # (N, d, C)
    np.testing.assert_allclose(
        F.cross_entropy(class_last, target, reduction="none", axis=-1).numpy(), expected
    )
    assert F.nll_loss(ta.tensor(x), target).item() == pytest.approx(-0.1300000000000005)
    one_row = F.cross_entropy(ta.tensor(LOGITS[0], dtype=ta.float64), np.array(3))  # (C,), 0-d
    assert one_row.item() == pytest.approx(0.5437745368666252, rel=1e-14)  # PyTorch 2.13


def test_cross_entropy_third_positional_argument_is_weight():
    weight = ta.tensor(WEIGHT, dtype=ta.float64)
    target = np.array([3, 0, 1])
    by_position = F.cross_entropy(_logits(), target, weight).item()
    assert by_position == F.cross_entropy(_logits(), target, weight=weight).item()
    with pytest.raises(TypeError, match=r"'weight' \(position 3\).*str.*reduction='sum'"):
        F.cross_entropy(_logits(), target, "sum")
    with pytest.raises(TypeError, match=r"'weight' \(position 3\).*list"):
        F.cross_entropy(_logits(), target, [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="defined either for all 4 classes"):
        F.cross_entropy(_logits(), target, ta.ones(3, dtype=ta.float64))


def test_cross_entropy_legacy_size_average_and_reduce_as_pytorch():
    target = np.array([3, 0, 1])
    with pytest.warns(UserWarning, match="reduction='sum'"):
        summed = F.cross_entropy(_logits(), target, size_average=False)
    assert summed.item() == pytest.approx(
        F.cross_entropy(_logits(), target, reduction="sum").item()
    )
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.cross_entropy(_logits(), target, reduce=False).shape == (3,)


def test_cross_entropy_integer_logits_fail_on_the_dtype_before_the_target_shape():
    with pytest.raises(TypeError, match="float tensor, got dtype int64"):
        F.cross_entropy(ta.ones(3, 4, dtype=ta.int64), np.array([0, 1]))  # target shape wrong too


def test_cross_entropy_errors_are_pytorchs():
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        F.cross_entropy(_logits(), np.array([0, 4, 1]))
    with pytest.raises(RuntimeError, match="ignore_index is not supported for class-probability"):
        F.cross_entropy(_logits(), ta.tensor(PROBS, dtype=ta.float64), ignore_index=1)
    with pytest.raises(ValueError, match=r"expected target size \(2, 5\).*got \(2, 4\).*axis=-1"):
        F.cross_entropy(ta.zeros(2, 3, 5), np.zeros((2, 4), dtype=np.int64))


def test_class_last_logits_that_pytorch_refuses_are_read_class_last_with_a_warning():
    """(B, T, C) logits with a (B, T) target: PyTorch raises (it wants (B, C)); with T != C the
    call means one thing, read with the classes last, and a warning says so."""
    logits = ta.tensor(np.random.default_rng(0).standard_normal((2, 3, 5)), requires_grad=True)
    target = np.array([[0, 4, 1], [2, 2, 3]])
    with pytest.warns(UserWarning, match=r"classes LAST.*axis=-1.*T == C"):
        loss = F.cross_entropy(logits, target)
    expected = F.cross_entropy(logits, target, axis=-1)
    assert loss.item() == expected.item()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # T == C: PyTorch's meaning (axis 1), no warning
        square = F.cross_entropy(ta.zeros(2, 3, 3), np.zeros((2, 3), dtype=np.int64))
    assert square.item() == pytest.approx(np.log(3))


def test_uint8_token_ids_and_targets_work():
    logits = _logits()
    F.cross_entropy(logits, np.array([3, 0, 1], dtype=np.uint8)).backward()
    assert logits.grad.shape == (3, 4)


# ----------------------------------------------------------------------- other loss forms
def test_loss_functions_take_pytorchs_positional_order_and_weight():
    a = ta.tensor([[1.0, 2.0], [3.0, 4.0]])
    zeros = ta.zeros(2, 2)
    with pytest.warns(UserWarning, match="size_average and reduce"):
        assert F.mse_loss(a, zeros, False).item() == 30.0  # size_average=False: a sum
    assert F.mse_loss(a, zeros, None, None, "sum").item() == 30.0
    weight = ta.tensor([[1.0, 0.0], [2.0, 1.0]])
    assert F.mse_loss(a, zeros, weight=weight).item() == 8.75  # PyTorch 2.13
    assert F.l1_loss(a, zeros, weight=weight).item() == 2.75
    with pytest.warns(UserWarning, match="different to the input size"):
        assert F.mse_loss(a, ta.zeros(2)).item() == 7.5


# ---------------------------------------------------------------------------- activations
def test_elu_takes_a_0d_tensor_alpha_and_refuses_what_pytorch_refuses():
    x = ta.tensor([-1.0, 0.5, 2.0], dtype=ta.float64)
    expected = [-1.2642411176571153, 0.5, 2.0]  # PyTorch 2.13, alpha=tensor(2.0)
    np.testing.assert_allclose(F.elu(x, alpha=ta.tensor(2.0)).numpy(), expected, rtol=1e-15)
    np.testing.assert_allclose(F.elu(x, alpha=2).numpy(), expected, rtol=1e-15)
    with pytest.raises(RuntimeError, match="real"):
        F.elu(x, alpha=1j)
    with pytest.raises(TypeError, match="must be a number, not Tensor"):
        F.elu(x, alpha=ta.tensor([2.0]))
    with pytest.raises(TypeError, match="must be a number, not NoneType"):
        F.hardtanh(x, min_val=None)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(x, 1.0, 0.0)
    with pytest.raises(TypeError, match="negative_slope"):
        F.leaky_relu(x, None)


@pytest.mark.parametrize(
    "fn, method",
    [
        (lambda y: F.relu(y, inplace=True), "Relu"),
        (lambda y: F.leaky_relu(y, 0.1, inplace=True), "LeakyRelu"),
        (lambda y: F.elu(y, inplace=True), "Elu"),
        (lambda y: F.hardtanh(y, inplace=True), "Where"),
        (lambda y: F.silu(y, inplace=True), "Mul"),
    ],
)
def test_inplace_true_writes_into_the_input_and_records_it(fn, method):
    x = ta.tensor([-1.0, 2.0], dtype=ta.float64, requires_grad=True)
    y = x * 1
    out = fn(y)
    assert out is y and y.grad_fn.name == method
    expected = fn(ta.tensor([-1.0, 2.0], dtype=ta.float64) * 1).numpy()
    np.testing.assert_array_equal(y.numpy(), expected)
    y.sum().backward()
    assert x.grad is not None
    with pytest.raises(RuntimeError, match="leaf"):
        fn(ta.tensor([1.0], requires_grad=True))


def test_dropout_inplace_and_nn_modules_pass_it_on():
    x = ta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1
    assert F.dropout(y, 0.5, inplace=True) is y
    y = x * 1
    assert ta.nn.ReLU(inplace=True)(y) is y and ta.nn.ELU(inplace=True)(y) is y


def test_softmax_dim_and_dtype_as_pytorch():
    x = ta.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
    with pytest.raises(TypeError, match="dim must be an int"):
        F.softmax(x, dim=())
    with pytest.raises(TypeError, match="dim must be an int"):
        F.softmax(x, axis=())
    assert F.softmax(x, 1, dtype=ta.float64).dtype == np.float64
    assert F.log_softmax(x.half(), 1, dtype=ta.float32).dtype == np.float32
    with pytest.raises(TypeError, match="float dtype"):
        F.softmax(x, 1, dtype=ta.int64)
    cube = ta.tensor(np.arange(24.0).reshape(2, 3, 4))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        implicit = F.softmax(cube)  # PyTorch: dim 0 for a 3-D input
    np.testing.assert_allclose(implicit.numpy().sum(0), np.ones((3, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(F.softmax(cube, -1).numpy().sum(-1), np.ones((2, 3)))
    assert ta.nn.Softmax().dim is None and repr(ta.nn.Softmax(dim=1)) == "Softmax(dim=1)"


# ---------------------------------------------------------------------------------- attention
def test_scaled_dot_product_attention_grouped_query_heads():
    rng = np.random.default_rng(0)
    q = ta.tensor(rng.standard_normal((2, 4, 3, 5)), requires_grad=True)
    k = ta.tensor(rng.standard_normal((2, 2, 6, 5)), requires_grad=True)
    v = ta.tensor(rng.standard_normal((2, 1, 6, 7)), requires_grad=True)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    repeated_k = ta.tensor(np.repeat(k.numpy(), 2, axis=1))  # heads 0, 0, 1, 1
    repeated_v = ta.tensor(np.repeat(v.numpy(), 4, axis=1))
    expected = F.scaled_dot_product_attention(q, repeated_k, repeated_v, is_causal=True)
    np.testing.assert_allclose(out.numpy(), expected.numpy(), rtol=1e-13)
    out.sum().backward()
    assert k.grad.shape == k.shape and v.grad.shape == v.shape
    with pytest.raises(ValueError, match="must divide the number of heads in query"):
        F.scaled_dot_product_attention(
            q, ta.zeros(2, 3, 6, 5), ta.zeros(2, 3, 6, 7), enable_gqa=True
        )
    with pytest.raises(ValueError, match="do not broadcast"):
        F.scaled_dot_product_attention(q, k, v)  # without enable_gqa: PyTorch's error too


# ----------------------------------------------------------------------------------- rms_norm
X3 = (np.arange(24).reshape(2, 3, 4) * 0.37) % 1.3 - 0.5


def test_rms_norm_values_and_gradients_as_pytorch():
    x = ta.tensor(X3, requires_grad=True)
    w = ta.tensor([0.5, -1.0, 2.0, 1.5], dtype=ta.float64, requires_grad=True)
    y = F.rms_norm(x, (4,), w, eps=1e-5)
    (y * y).sum().backward()
    expected = [
        [-0.5990537631266621, 0.31150795682586435, 1.1501832252031912, 2.192536773043583],
        [-0.33629479070004653, -0.10509212209376462, 1.7655476511752428, 2.4906832936222187],
        [-0.19026235464058747, -0.6251477366762154, 3.2616403652672115, -1.345426650672724],
    ]
    np.testing.assert_allclose(y.numpy()[0], expected, rtol=1e-13)
    grad_x = [8.01854841951255, 0.9651625063906719, 6.486420598780967, 4.227476578171721]
    np.testing.assert_allclose(x.grad.numpy()[0, 0], grad_x, rtol=1e-12)
    grad_w = [3.1959726183963153, -13.871302676417004, 31.339737368470914, 18.096100821166036]
    np.testing.assert_allclose(w.grad.numpy(), grad_w, rtol=1e-12)
    no_eps = [0.8820549355408305, 1.6979557509160967, -0.3528219742163314, 0.4630788411589348]
    np.testing.assert_allclose(F.rms_norm(ta.tensor(X3[1, 2]), 4).numpy(), no_eps, rtol=1e-13)
    with pytest.raises(ValueError, match="trailing axes"):
        F.rms_norm(ta.tensor(X3), (3,))


# ---------------------------------------------------------------------------------- embedding
def test_embedding_ids_out_of_range_are_pytorchs_index_error():
    table = ta.randn(5, 2, requires_grad=True)
    with pytest.raises(IndexError, match="out of range in self"):
        F.embedding(np.array([-1]), table)  # not the last row
    with pytest.raises(IndexError, match="out of range in self"):
        F.embedding(np.array([5]), table)
    with pytest.raises(TypeError, match="integers"):
        F.embedding(np.array([1.0]), table)


@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint16, np.int16, np.int32])
def test_small_integer_token_ids_have_a_gradient(dtype):
    layer = ta.nn.Embedding(300, 4)
    layer(np.array([1, 2, 2], dtype=dtype)).sum().backward()  # once an OverflowError
    np.testing.assert_array_equal(layer.weight.grad.numpy()[:3, 0], [0.0, 1.0, 2.0])


def test_embedding_max_norm_and_scale_grad_by_freq_as_pytorch():
    table = ta.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    rows = F.embedding(np.array([0, 1]), table, max_norm=1.0)
    expected = [[0.6000000238418579, 0.800000011920929], [0.30000001192092896, 0.4000000059604645]]
    np.testing.assert_allclose(rows.numpy(), expected, rtol=1e-7)
    np.testing.assert_allclose(table.numpy()[0], expected[0], rtol=1e-7)  # renormed in place
    np.testing.assert_array_equal(table.numpy()[2], [6.0, 8.0])  # not looked up: unchanged
    weight = ta.randn(4, 3, requires_grad=True)
    F.embedding(np.array([[0, 2, 0]]), weight, scale_grad_by_freq=True).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], [1.0, 0.0, 1.0, 0.0])


# --------------------------------------------------------------------------------- reductions
def test_std_has_gradient_zero_at_zero_spread_as_pytorch():
    for call in (lambda y: y.std(), lambda y: y.std(dim=0), lambda y: y.std(dim=0, correction=0)):
        y = ta.ones(3, requires_grad=True)
        with np.errstate(divide="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            call(y).backward()
        np.testing.assert_array_equal(y.grad.numpy(), [0.0, 0.0, 0.0])
    rows = ta.tensor([[1.0, 1.0], [1.0, 3.0]], requires_grad=True)
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rows.std(dim=1).sum().backward()
    np.testing.assert_allclose(
        rows.grad.numpy(), [[0.0, 0.0], [-0.7071067811865476, 0.7071067811865476]]
    )


def test_prod_and_logsumexp_over_an_empty_axis_as_pytorch():
    x = ta.zeros(2, 0, requires_grad=True)
    np.testing.assert_array_equal(x.prod(1).numpy(), [1.0, 1.0])
    np.testing.assert_array_equal(ta.logsumexp(x, 1).numpy(), [-np.inf, -np.inf])
    (x.prod(1).sum() + x.prod()).backward()
    assert x.grad.shape == (2, 0)
    zero_d = ta.tensor(2.0, requires_grad=True)
    out = zero_d.logsumexp(0)
    out.backward()
    assert out.item() == 2.0 and zero_d.grad.item() == 1.0
    with pytest.raises(IndexError, match="dimension out of range"):
        zero_d.logsumexp(1)


def test_float32_var_with_a_large_offset_keeps_float32_precision():
    data = (1e4 + np.random.default_rng(0).standard_normal(1000) * 1e-1).astype(np.float32)
    exact = data.astype(np.float64).var(ddof=1)  # 0.00955004554038291; PyTorch: 0.00955005269...
    var = ta.tensor(data).var(dim=0)
    assert var.dtype == np.float32
    assert abs(var.item() - exact) / exact < 1e-6  # once 8e-5 here, 6e-3 with larger offsets
    std = ta.tensor(data).std(dim=0)
    assert abs(std.item() - np.sqrt(exact)) / np.sqrt(exact) < 1e-6
