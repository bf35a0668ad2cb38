"""PyTorch's `torch.*` functions and the functional forms added for carried-over PyTorch code
(torch_functions.py, functional/): the numbers PyTorch 2.13 gives for a small fixed
input (float64), written in, so no torch is needed; the errors; and the flags PyTorch code
passes (inplace=, padding_idx=). tests/test_ops.py gradient-checks each of them."""

import numpy as np
import pytest

import tinygrad_attn as ta
import tinygrad_attn.functional as F
from tinygrad_attn import nn

X = [[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]


def f64(values):
    return ta.tensor(values, dtype=np.float64)


LABELS = [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
# name: (the function of x, the value torch gives, the gradient of its sum torch gives)
TORCH = {
    "nll_loss": (
        lambda x: F.nll_loss(x.log_softmax(-1), np.array([2, 0])),
        0.273833504443152,
        [[0.087645196070018, 0.019556286635344, -0.107201482705362],
         [-0.131937637843703, 0.082125813812544, 0.049811824031159]],
    ),
    "binary_cross_entropy_with_logits": (
        lambda x: F.binary_cross_entropy_with_logits(x, f64(LABELS)),
        0.630484020910684,
        [[-0.062923444799691, 0.044823570228333, -0.019867153670353],
         [0.136262412698941, -0.083333333333333, 0.062923444799691]],
    ),
    "binary_cross_entropy": (
        lambda x: F.binary_cross_entropy(x.sigmoid(), f64(LABELS)),
        0.630484020910684,
        [[-0.062923444799691, 0.044823570228333, -0.019867153670353],
         [0.136262412698941, -0.083333333333333, 0.062923444799691]],
    ),
    "smooth_l1_loss": (
        lambda x: F.smooth_l1_loss(x, ta.zeros(2, 3, dtype=np.float64)),
        0.541666666666667,
        [[0.083333333333333, -0.166666666666667, 0.166666666666667],
         [0.166666666666667, 0.0, -0.083333333333333]],
    ),
    "logsumexp": (
        lambda x: ta.logsumexp(x, 1),
        [2.241311296657157, 1.806355712229147],
        [[0.175290392140037, 0.039112573270687, 0.785597034589276],
         [0.736124724312594, 0.164251627625088, 0.099623648062318]],
    ),
    "normalize": (
        lambda x: F.normalize(x, dim=1),
        [[0.218217890235992, -0.436435780471985, 0.87287156094397],
         [0.948683298050514, 0.0, -0.316227766016838]],
        [[0.37408781183313, 0.561131717749695, 0.187043905916565],
         [0.25298221281347, 0.632455532033676, 0.758946638440411]],
    ),
    "cosine_similarity": (
        lambda x: F.cosine_similarity(x, f64([[1.0, 2.0, 3.0]])),
        [0.524890659167824, 0.0],
        [[0.066652782116549, 0.333263910582745, 0.149968759762235],
         [0.169030850945703, 0.338061701891407, 0.50709255283711]],
    ),
    "einsum": (
        lambda x: ta.einsum("ij,kj->ik", x, f64([[1.0, 2.0, 3.0]])),
        [[4.5], [0.0]],
        [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]],
    ),
    "sort": (
        lambda x: ta.sort(x, 1, descending=True).values * f64([1.0, 2.0, 3.0]),
        [[2.0, 1.0, -3.0], [1.5, 0.0, -1.5]],
        [[2.0, 3.0, 1.0], [1.0, 2.0, 3.0]],
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(TORCH))
def test_the_value_and_gradient_pytorch_gives(name):
    fn, value, grad = TORCH[name]
    x = ta.tensor(X, dtype=np.float64, requires_grad=True)
    out = fn(x)
    out.sum().backward()
    np.testing.assert_allclose(out.numpy(), value, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(x.grad, grad, rtol=1e-12, atol=1e-14)


def test_torch_var_and_std_default_to_pytorchs_correction_of_one():
    x = ta.tensor(X, dtype=np.float64)
    np.testing.assert_allclose(ta.var(x, 1).numpy(), [2.25, 1.0833333333333333])  # torch.var
    np.testing.assert_allclose(ta.var(x).item(), 1.3416666666666666)  # torch.var(x)
    np.testing.assert_allclose(ta.var(x, 1, False).numpy(), np.var(np.array(X), axis=1))
    np.testing.assert_allclose(ta.std(x, dim=0, correction=0).numpy(), np.std(np.array(X), axis=0))


def test_the_elementwise_and_reduction_functions_are_the_tensor_methods():
    x = ta.tensor(X, dtype=np.float64, requires_grad=True)
    pairs = [
        (ta.exp(x), x.exp()), (ta.tanh(x), x.tanh()), (ta.sqrt(x.abs()), x.abs().sqrt()),
        (ta.pow(x, 3.0), x**3.0), (ta.pow(2.0, x), 2.0**x), (ta.clamp(x, min=0.0), x.clamp(0.0)),
        (ta.sum(x, 1), x.sum(1)), (ta.mean(x, dim=0, keepdim=True), x.mean(0, keepdims=True)),
        (ta.max(x, 1).values, x.max(dim=1).values), (ta.softmax(x, -1), x.softmax(-1)),
        (ta.matmul(x, x.T), x @ x.T), (ta.transpose(x, 0, 1), x.T),
        (ta.masked_fill(x, np.array([True, False, True]), 0.0),
         x.masked_fill(np.array([True, False, True]), 0.0)),
    ]  # fmt: skip
    for got, expected in pairs:
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        assert got.requires_grad
    assert ta.is_tensor(x) and not ta.is_tensor(X) and ta.numel(x) == 6
    assert ta.allclose(x, x + 1e-12) and ta.equal(x, x.clone()) and not ta.equal(x, x[0])
    np.testing.assert_array_equal(ta.isnan(ta.tensor([1.0, np.nan])).numpy(), [False, True])


def test_einsum_takes_ellipses_the_implicit_output_and_a_list_of_operands():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    ta_a, ta_b = ta.tensor(a, requires_grad=True), ta.tensor(b, requires_grad=True)
    out = ta.einsum("...ij,...jk->...ik", ta_a, ta_b)
    np.testing.assert_allclose(out.numpy(), a @ b)
    assert out.grad_fn.name == "Einsum"  # one node
    np.testing.assert_allclose(ta.einsum("ij,jk", [ta_b.T, ta_b]).numpy(), b.T @ b)
    np.testing.assert_allclose(ta.einsum("i j -> j i", ta_b).numpy(), b.T)


def test_einsum_bmm_and_outer_refuse_what_they_cannot_do_and_say_so():
    m = ta.tensor(np.eye(3))
    with pytest.raises(ValueError, match=r"index 'i' appears twice in one operand of 'ii->i'"):
        ta.einsum("ii->i", m)
    with pytest.raises(ValueError, match=r"'ij,jk->ik' has 2 operand\(s\) but 1 were given"):
        ta.einsum("ij,jk->ik", m)
    with pytest.raises(ValueError, match=r"operand 0 has 2 axes but 'ijk'"):
        ta.einsum("ijk->i", m)
    with pytest.raises(ValueError, match=r"bmm: needs two 3-D tensors.*\(3, 3\) and \(3, 3\)"):
        ta.bmm(m, m)
    with pytest.raises(ValueError, match=r"outer: needs two 1-D tensors"):
        ta.outer(m, m)
    with pytest.raises(
        TypeError, match=r"torch.exp: input must be a Tensor.*wrap it first: ta.tensor\(\[1.0\]\)"
    ):
        ta.exp([1.0])


def test_the_losses_check_their_inputs():
    p = ta.tensor([0.5, 1.5])
    with pytest.raises(ValueError, match=r"binary_cross_entropy: input must be probabilities"):
        F.binary_cross_entropy(p, ta.tensor([1.0, 0.0]))
    with pytest.raises(
        ValueError, match=r"l1_loss: input has shape \(2,\) but target has shape \(3,\)"
    ):
        F.l1_loss(p, ta.tensor([1.0, 0.0, 1.0]))
    with pytest.raises(
        ValueError, match=r"nll_loss\(\): weight tensor should be defined either for all 2"
    ):
        F.nll_loss(ta.tensor([[0.1, 0.9]]), np.array([1]), weight=np.ones(3))
    with pytest.raises(ValueError, match=r"pad: only mode='constant'"):
        F.pad(p, (1, 1), mode="reflect")
    with pytest.raises(ValueError, match=r"one_hot: class ids must be in \[0, 2\)"):
        F.one_hot(np.array([0, 2]), 2)


def test_binary_cross_entropy_at_probabilities_0_and_1_is_finite_as_in_pytorch():
    p = ta.tensor([0.0, 1.0, 0.5], requires_grad=True)
    loss = F.binary_cross_entropy(p, ta.tensor([1.0, 0.0, 1.0]), reduction="sum")
    loss.backward()
    np.testing.assert_allclose(loss.item(), 200 + np.log(2))  # torch: each log clamped at -100
    assert np.isfinite(p.grad).all()


def test_pad_crops_with_negative_amounts_and_one_hot_counts_the_classes():
    x = ta.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    out = F.pad(x, (-1, 2, 0, -2))  # last axis: crop 1 before, pad 2 after; rows: crop 2
    np.testing.assert_array_equal(out.numpy(), [[1.0, 2.0, 3.0, 0.0, 0.0]])
    out.sum().backward()
    np.testing.assert_array_equal(x.grad, [[0, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 0]])
    hot = F.one_hot(np.array([[1], [3]]))
    assert hot.shape == (2, 1, 4) and hot.dtype == np.int64 and hot.numpy().sum() == 2


def test_pytorch_flags_carry_over_inplace_and_padding_idx():
    x = ta.tensor([-1.0, 2.0], requires_grad=True)
    y = x * 1
    for out in (F.relu(y, inplace=True), nn.ReLU(inplace=True)(y), F.dropout(y, 0.0, inplace=True)):
        assert out is y and out.requires_grad  # written in place, as PyTorch
    np.testing.assert_array_equal(y.numpy(), [0.0, 2.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0])
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    table = nn.Embedding(4, 3, padding_idx=-4)
    assert table.padding_idx == 0 and not table.weight.numpy()[0].any()  # starts at zeros
    table(np.array([[0, 1], [0, 0]])).sum().backward()
    np.testing.assert_array_equal(table.weight.grad[:, 0], [0.0, 1.0, 0.0, 0.0])


def test_new_tensors_and_initialisers_in_pytorchs_spelling():
    x = ta.tensor([1.0, 2.0], dtype=np.float32)
    assert x.new_zeros(2, 3).shape == (2, 3) and x.new_ones((4,)).dtype == np.float32
    np.testing.assert_array_equal(x.new_full((2,), 7).numpy(), [7.0, 7.0])
    assert x.new_tensor([1, 2]).dtype == np.float32 and x.new_empty(3).shape == (3,)
    ta.manual_seed(0)
    w = ta.zeros(2000, requires_grad=True)
    with ta.no_grad():
        w.normal_(0.0, 0.02)
        assert abs(w.numpy().std() - 0.02) < 0.002 and abs(w.numpy().mean()) < 0.002
        w.uniform_(-1.0, 1.0)
        assert -1.0 <= w.numpy().min() and w.numpy().max() <= 1.0
    with pytest.raises(RuntimeError, match=r"normal_\(\): in-place change of the leaf"):
        w.normal_()
    assert ta.eye(2, 3).shape == (2, 3) and ta.linspace(0, 1, 5).numpy()[-1] == 1.0
    assert sorted(ta.randperm(5).numpy().tolist()) == [0, 1, 2, 3, 4]
    assert ta.empty(2, 3).shape == ta.empty((2, 3)).shape == (2, 3)


def test_pytorchs_data_idioms_write_into_the_parameter():
    """`.data` is PyTorch's: a tensor sharing the parameter's memory, outside the graph, so the
    initialisation and update idioms of older PyTorch code change the parameter itself."""
    ta.manual_seed(0)
    lin = nn.Linear(300, 2)
    weight = lin.weight.numpy()
    lin.weight.data.normal_(mean=0.0, std=0.02)
    lin.bias.data.zero_()
    assert lin.weight.numpy() is weight and abs(weight.std() - 0.02) < 0.003
    np.testing.assert_array_equal(lin.bias.numpy(), [0.0, 0.0])
    lin(ta.ones(1, 300)).sum().backward()
    before = weight.copy()
    for p in lin.parameters():
        p.data.add_(p.grad, alpha=-0.1)  # the classic manual SGD step
    np.testing.assert_allclose(weight, before - 0.1 * lin.weight.grad.numpy())
    assert lin.weight.requires_grad and lin.weight.is_leaf


def test_loss_modules_call_the_functional_form_with_their_options():
    rng = np.random.default_rng(0)
    logits = ta.tensor(rng.standard_normal((4, 5)), requires_grad=True)
    target, other = np.array([0, 3, 1, 4]), ta.tensor(rng.standard_normal((4, 5)))
    labels = ta.tensor((rng.random((4, 5)) > 0.5) * 1.0)
    pairs = [
        (nn.CrossEntropyLoss(label_smoothing=0.1)(logits, target),
         F.cross_entropy(logits, target, label_smoothing=0.1)),
        (nn.NLLLoss(reduction="sum")(logits.log_softmax(-1), target),
         F.nll_loss(logits.log_softmax(-1), target, reduction="sum")),
        (nn.MSELoss()(logits, other), F.mse_loss(logits, other)),
        (nn.L1Loss(reduction="none")(logits, other), F.l1_loss(logits, other, reduction="none")),
        (nn.SmoothL1Loss(beta=0.5)(logits, other), F.smooth_l1_loss(logits, other, beta=0.5)),
        (nn.BCELoss()(logits.sigmoid(), labels), F.binary_cross_entropy(logits.sigmoid(), labels)),
        (nn.BCEWithLogitsLoss(pos_weight=2.0)(logits, labels),
         F.binary_cross_entropy_with_logits(logits, labels, pos_weight=2.0)),
    ]  # fmt: skip
    for module_loss, functional_loss in pairs:
        np.testing.assert_array_equal(module_loss.numpy(), functional_loss.numpy())
    assert repr(nn.MSELoss(reduction="sum")) == "MSELoss()"  # (PyTorch's repr)
    assert nn.Flatten()(ta.zeros(2, 3, 4)).shape == (2, 12)  # the batch axis kept
    np.testing.assert_allclose(nn.LogSoftmax(-1)(logits).numpy(), logits.log_softmax(-1).numpy())
    weighted = nn.CrossEntropyLoss(weight=ta.tensor(np.arange(1.0, 6.0)))  # a buffer, as PyTorch
    assert list(weighted.state_dict()) == ["weight"]
    np.testing.assert_array_equal(
        weighted(logits, target).numpy(),
        F.cross_entropy(logits, target, weight=ta.tensor(np.arange(1.0, 6.0))).numpy(),
    )
    with pytest.raises(ValueError, match="L1Loss: 'avg' is not a valid value for reduction"):
        nn.L1Loss(reduction="avg")


def test_pytorchs_multihead_attention_gives_pytorchs_numbers():
    e = 4
    state = {  # PyTorch's parameter names, in PyTorch's order: a torch state_dict loads as is
        "in_proj_weight": np.cos(np.arange(3 * e * e)).reshape(3 * e, e) * 0.5,
        "in_proj_bias": np.sin(np.arange(3 * e)) * 0.1,
        "out_proj.weight": np.cos(np.arange(e * e) * 0.7).reshape(e, e) * 0.5,
        "out_proj.bias": np.linspace(-0.2, 0.2, e),
    }
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)  # (parameters in float64, as torch's here)
    try:
        layer = nn.MultiheadAttention(e, 2, batch_first=True)
    finally:
        ta.set_default_dtype(previous)
    assert list(layer.state_dict()) == list(state)
    layer.load_state_dict(state)
    x = ta.tensor(np.sin(np.arange(12) * 1.3).reshape(1, 3, e), dtype=np.float64)
    x.requires_grad_()
    out, weights = layer(x, x, x, key_padding_mask=np.array([[False, False, True]]))
    (out * f64(np.cos(np.arange(12)).reshape(1, 3, 4))).sum().backward()
    # what torch 2.13 gives for the same layer, input and mask (float64)
    np.testing.assert_allclose(out.numpy(), [[
        [-0.05689828536275, -0.16233296621608, 0.10384280139853, 0.22560993018127],
        [-0.00437194627104, -0.21660464559717, 0.15358843986377, 0.18613870573682],
        [-0.05477633133768, -0.17620808941452, 0.12786774948766, 0.19421136773375],
    ]], rtol=1e-11, atol=1e-13)  # fmt: skip
    np.testing.assert_allclose(weights.numpy(), [[
        [0.35687320633173, 0.64312679366827, 0.0],
        [0.62849570330932, 0.37150429669068, 0.0],
        [0.75684243672814, 0.24315756327186, 0.0],
    ]], rtol=1e-11, atol=1e-13)  # fmt: skip
    np.testing.assert_allclose(x.grad, [[
        [-0.0438966092154, 0.02017966449305, 0.06570284772988, 0.05081913576807],
        [0.03698918293508, -0.02122942899658, -0.05992980181331, -0.04353099122333],
        [0.00044152597896, 0.00442842269646, 0.00434384800955, 0.00026555949535],
    ]], rtol=1e-10, atol=1e-13)  # fmt: skip
    grad = layer.in_proj_weight.grad
    np.testing.assert_allclose(
        [grad.sum(), (grad**2).sum()], [0.07405145888940462, 0.10733294994872129]
    )
    assert "embed_dim=4, num_heads=2, batch_first=True" in repr(layer)
    assert "(out_proj): Linear(in_features=4, out_features=4, bias=True)" in repr(layer)


def test_scatter_scatter_add_and_their_in_place_forms_as_pytorch():
    """Values and gradients as torch 2.13 gives them (float64), repeated indices included."""
    x = ta.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ta.float64, requires_grad=True)
    src = ta.tensor([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]], dtype=ta.float64, requires_grad=True)
    w = ta.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=ta.float64)
    y = x.scatter(1, ta.tensor([[2, 0, 1], [1, 2, 0]]), src)
    (y * w).sum().backward()
    assert y.tolist() == [[20.0, 30.0, 10.0], [60.0, 40.0, 50.0]]
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    assert src.grad.tolist() == [[3.0, 1.0, 2.0], [5.0, 6.0, 4.0]]
    x.grad = src.grad = None
    z = x.scatter_add(0, ta.tensor([[1, 0, 1], [1, 1, 0]]), src)
    (z * w).sum().backward()
    assert z.tolist() == [[1.0, 22.0, 63.0], [54.0, 55.0, 36.0]]
    assert x.grad.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert src.grad.tolist() == [[4.0, 2.0, 6.0], [4.0, 5.0, 3.0]]
    index = ta.tensor([[2, 0, 1], [1, 1, 0]])
    assert ta.zeros(2, 3).scatter(1, index, 7.0).tolist() == [[7.0] * 3, [7.0, 7.0, 0.0]]
    h = ta.zeros(2, 3, dtype=ta.float64)
    assert h.scatter_(1, index, src) is h
    assert h.tolist() == [[20.0, 30.0, 10.0], [60.0, 50.0, 0.0]]
    x.grad = None
    a = x * 1
    a.scatter_add_(1, index, src)
    a.sum().backward()
    assert a.tolist() == [[21.0, 32.0, 13.0], [64.0, 95.0, 6.0]]
    assert x.grad.tolist() == [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]


def test_scatter_errors_name_the_problem():
    x = ta.zeros(2, 3)
    with pytest.raises(RuntimeError, match="self.dtype to be equal to src.dtype"):
        x.scatter(1, ta.tensor([[0, 1]]), ta.ones(1, 2, dtype=ta.float64))
    with pytest.raises(IndexError, match="(?i)dimension out of range"):
        x.scatter(5, ta.tensor([[0]]), ta.ones(1, 1))
    with pytest.raises(IndexError, match="index 3 is out of bounds for dim 1 with size 3"):
        x.scatter(1, ta.tensor([[3]]), ta.ones(1, 1))
    with pytest.raises(TypeError, match="integer tensor"):
        x.scatter(1, ta.tensor([[0.5]]), ta.ones(1, 1))
