"""nn.TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder
and Transformer (nn/torch_transformer.py) without PyTorch: PyTorch's parameter names, the
outputs and gradients PyTorch 2.13 gave for tiny float64 configurations (its numbers are
written in below; tests/test_torch_transformer_vs_torch.py makes them again when torch is
installed), gradcheck, initialisation, masks, and the errors."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import nn
from tinygrad_attn.nn import functional as F


@pytest.fixture
def float64():
    """Build modules in float64 and put the default back afterwards."""
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    ta.manual_seed(0)
    yield
    ta.set_default_dtype(previous)


def fixed_state(module) -> dict:
    """Parameter values made from the names' order only (no generator), so PyTorch's layer can
    be given the very same ones: norm weights near 1, everything else small."""
    state = {}
    for i, (name, param) in enumerate(module.named_parameters()):
        wave = np.cos(0.9 * np.arange(math.prod(param.shape)) + i).reshape(param.shape)
        state[name] = 1 + 0.1 * wave if ".weight" in name and "norm" in name else 0.4 * wave
    return state


def fixed_input(shape, k: int) -> np.ndarray:
    return np.sin(1.3 * np.arange(math.prod(shape)) + k).reshape(shape)


def loss_weights(shape) -> np.ndarray:
    return np.cos(np.arange(math.prod(shape))).reshape(shape)


KPM = np.array([[False, False, True], [False, False, False]])  # (N=2, S=3)
KPM_ROW = np.array([[False, True, True], [True, True, True]])  # sequence 1 all padding
CAUSAL = np.triu(np.full((3, 3), -np.inf), 1)
BOOL_CAUSAL_4 = np.triu(np.ones((4, 4), dtype=bool), 1)

# name: (make(library), input shapes, forward keywords, train mode?, parameters to fingerprint)
# Every layer is (d_model 4, nhead 2, dim_feedforward 6, dropout 0); inputs: S = 3, T = 4, N = 2.
CASES = {
    "encoder layer, post-norm, relu, bool masks": (
        lambda L: L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0),
        [(3, 2, 4)],
        {"src_mask": np.array([[False, True, False]] * 3), "src_key_padding_mask": KPM},
        True,
        ["self_attn.in_proj_weight", "linear1.weight", "norm1.weight", "norm2.bias"],
    ),
    "encoder layer, pre-norm, gelu, batch first, float masks": (
        lambda L: L.nn.TransformerEncoderLayer(
            4, 2, 6, 0.0, "gelu", batch_first=True, norm_first=True
        ),
        [(2, 3, 4)],
        {
            "src_mask": np.cos(np.arange(9.0)).reshape(3, 3),
            "src_key_padding_mask": np.where(KPM, -np.inf, 0.25),
        },
        True,
        ["self_attn.in_proj_bias", "self_attn.out_proj.weight", "linear2.bias", "norm1.weight"],
    ),
    "encoder layer, per-head bool mask, fully padded sequence": (
        lambda L: L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, batch_first=True),
        [(2, 3, 4)],
        {
            "src_mask": np.array([[[False, False, True]] * 3, [[True, False, False]] * 3] * 2),
            "src_key_padding_mask": KPM_ROW,
            "is_causal": False,
        },
        True,
        ["self_attn.in_proj_weight", "linear1.bias"],
    ),
    "encoder layer, is_causal with the causal mask, one sequence (S, E)": (
        lambda L: L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0, layer_norm_eps=1e-3),
        [(3, 4)],
        {"src_mask": CAUSAL, "is_causal": True},
        True,
        ["self_attn.in_proj_weight", "norm2.weight"],
    ),
    "decoder layer, post-norm, masks of every kind": (
        lambda L: L.nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0),
        [(4, 2, 4), (3, 2, 4)],
        {
            "tgt_mask": np.triu(np.full((4, 4), -np.inf), 1),
            "memory_mask": np.array([[False, True, False]] * 4),
            "tgt_key_padding_mask": np.array([[False] * 3 + [True], [False] * 4]),
            "memory_key_padding_mask": KPM_ROW,
        },
        True,
        ["self_attn.in_proj_weight", "multihead_attn.in_proj_weight", "norm3.weight"],
    ),
    "decoder layer, pre-norm, gelu, batch first, no bias": (
        lambda L: L.nn.TransformerDecoderLayer(
            4, 2, 6, 0.0, "gelu", batch_first=True, norm_first=True, bias=False
        ),
        [(2, 4, 4), (2, 3, 4)],
        {"tgt_mask": BOOL_CAUSAL_4, "tgt_is_causal": True, "memory_key_padding_mask": KPM},
        True,
        ["multihead_attn.out_proj.weight", "linear1.weight", "norm2.weight"],
    ),
    "encoder of 2 layers with a final norm, causal mask detected": (
        lambda L: L.nn.TransformerEncoder(
            L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0), 2, L.nn.LayerNorm(4)
        ),
        [(3, 2, 4)],
        {"mask": CAUSAL, "src_key_padding_mask": KPM},
        True,
        ["layers.0.self_attn.in_proj_weight", "layers.1.linear2.weight", "norm.weight"],
    ),
    "decoder of 2 layers": (
        lambda L: L.nn.TransformerDecoder(
            L.nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, batch_first=True), 2
        ),
        [(2, 4, 4), (2, 3, 4)],
        {"tgt_mask": BOOL_CAUSAL_4, "memory_key_padding_mask": KPM},
        True,
        ["layers.0.multihead_attn.in_proj_weight", "layers.1.norm3.bias"],
    ),
    "transformer, sequence first": (
        lambda L: L.nn.Transformer(4, 2, 2, 2, 6, dropout=0.0),
        [(3, 2, 4), (4, 2, 4)],
        {
            "tgt_mask": np.triu(np.full((4, 4), -np.inf), 1),
            "src_key_padding_mask": KPM,
            "memory_key_padding_mask": KPM,
        },
        True,
        [
            "encoder.layers.0.self_attn.in_proj_weight",
            "encoder.norm.weight",
            "decoder.layers.1.multihead_attn.in_proj_weight",
            "decoder.norm.bias",
        ],
    ),
    "transformer, batch first, pre-norm, gelu": (
        lambda L: L.nn.Transformer(4, 2, 1, 1, 6, 0.0, "gelu", batch_first=True, norm_first=True),
        [(2, 3, 4), (2, 4, 4)],
        {"tgt_mask": BOOL_CAUSAL_4, "src_mask": np.cos(np.arange(9.0)).reshape(3, 3)},
        True,
        ["encoder.layers.0.linear1.weight", "decoder.layers.0.norm2.weight"],
    ),
    "encoder in eval mode without grad: padded positions are zeros": (
        lambda L: L.nn.TransformerEncoder(
            L.nn.TransformerEncoderLayer(4, 2, 6, batch_first=True), 2, L.nn.LayerNorm(4)
        ),
        [(2, 3, 4)],
        {"src_key_padding_mask": KPM_ROW},
        False,
        [],
    ),
}


def run_case(library, name: str, state: dict | None = None):
    """Build the case's module in `library` (ta or torch), load `state` (default: the fixed
    one), run it on the fixed inputs and, in train mode, backward a weighted sum. Returns the
    module, the inputs and the output. Both libraries in float64."""
    make, shapes, keywords, train, _ = CASES[name]
    module = make(library)
    module.load_state_dict(state if state is not None else fixed_state(module))
    module.train(train)
    inputs = [
        library.tensor(fixed_input(shape, k), requires_grad=train) for k, shape in enumerate(shapes)
    ]
    given = {k: library.tensor(v) if isinstance(v, np.ndarray) else v for k, v in keywords.items()}
    if train:
        out = module(*inputs, **given)
        (out * library.tensor(loss_weights(tuple(out.shape)))).sum().backward()
    else:
        with library.no_grad():
            out = module(*inputs, **given)
    return module, inputs, out


def fingerprint(grad: np.ndarray) -> list:
    """Three numbers that move with any change to a gradient: sum, sum of squares, first."""
    return [float(grad.sum()), float((grad**2).sum()), float(grad.reshape(-1)[0])]


@pytest.mark.filterwarnings("ignore:Support for mismatched")  # (bool with float masks)
@pytest.mark.parametrize("name", sorted(CASES))
def test_outputs_and_gradients_are_pytorchs(name, float64):
    module, inputs, out = run_case(ta, name)
    expected = PYTORCH[name]
    np.testing.assert_allclose(out.numpy().reshape(-1), expected["out"], rtol=1e-10, atol=1e-12)
    for x, grad in zip(inputs, expected.get("input grads", [])):
        np.testing.assert_allclose(np.asarray(x.grad).reshape(-1), grad, rtol=1e-9, atol=1e-12)
    params = dict(module.named_parameters())
    for key, numbers in expected.get("parameter grads", {}).items():
        got = fingerprint(np.asarray(params[key].grad))
        np.testing.assert_allclose(got, numbers, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "make, names",
    [
        (lambda: nn.TransformerEncoderLayer(4, 2, 6), "ENCODER_LAYER_KEYS"),
        (lambda: nn.TransformerDecoderLayer(4, 2, 6), "DECODER_LAYER_KEYS"),
        (lambda: nn.Transformer(4, 2, 1, 1, 6), "TRANSFORMER_KEYS"),
    ],
)
def test_parameter_names_and_shapes_are_pytorchs(make, names):
    state = make().state_dict()
    assert [(k, tuple(np.shape(v))) for k, v in state.items()] == PYTORCH_KEYS[names]


def test_the_layers_are_deep_copies_that_start_equal(float64):
    layer = nn.TransformerEncoderLayer(4, 2, 6)
    encoder = nn.TransformerEncoder(layer, 3)
    copies = [encoder.layers[i].linear1.weight for i in range(3)]
    assert len({id(w) for w in [layer.linear1.weight, *copies]}) == 4
    for w in copies:
        np.testing.assert_array_equal(w.numpy(), layer.linear1.weight.numpy())
    with ta.no_grad():
        copies[0].mul_(2.0)
    np.testing.assert_array_equal(copies[1].numpy(), layer.linear1.weight.numpy())
    assert encoder.layers[2].linear1.weight.name == "layers.2.linear1.weight"
    assert len(list(encoder.parameters())) == 3 * len(list(layer.parameters()))


def test_transformer_draws_every_matrix_with_xavier_uniform(float64):
    model = nn.Transformer(8, 2, 1, 1, 24)
    for name, param in model.named_parameters():
        values = param.numpy()
        if param.ndim > 1:  # bound sqrt(6 / (fan_in + fan_out)), and the draws reach near it
            bound = math.sqrt(6 / sum(param.shape))
            assert np.abs(values).max() <= bound, name
            assert np.abs(values).max() > 0.8 * bound, name
        elif "norm" in name and name.endswith("weight"):
            np.testing.assert_array_equal(values, 1.0)
        else:  # the biases keep their layer's initialisation
            assert param.ndim == 1
    # MultiheadAttention's own biases start at zero; Linear's are drawn
    np.testing.assert_array_equal(model.encoder.layers[0].self_attn.in_proj_bias.numpy(), 0.0)
    assert np.abs(model.decoder.layers[0].linear1.bias.numpy()).max() > 0


def test_generate_square_subsequent_mask_is_pytorchs():
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    assert mask.dtype == np.float32 and mask.shape == (3, 3)
    np.testing.assert_array_equal(mask.numpy(), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    wide = nn.Transformer.generate_square_subsequent_mask(4, device="cpu", dtype=ta.float64)
    assert wide.dtype == np.float64 and not wide.requires_grad
    assert nn.Transformer().generate_square_subsequent_mask(0).shape == (0, 0)
    with pytest.raises(ValueError, match="runs on NumPy, on the CPU only"):
        nn.Transformer.generate_square_subsequent_mask(3, device="cuda")
    with pytest.raises(ValueError, match="sz must be an int >= 0, got -1"):
        nn.Transformer.generate_square_subsequent_mask(-1)


def test_pytorchs_defaults():
    layer = nn.TransformerEncoderLayer(8, 2)
    assert layer.linear1.out_features == 2048 and layer.dropout.p == 0.1
    assert layer.activation is F.relu and layer.activation_relu_or_gelu == 1
    assert layer.norm1.eps == 1e-5 and not layer.norm_first and not layer.self_attn.batch_first
    assert layer.self_attn.dropout == 0.1 and layer.dropout1.p == layer.dropout2.p == 0.1
    model = nn.Transformer()
    assert (model.d_model, model.nhead, model.batch_first) == (512, 8, False)
    assert len(model.encoder.layers) == len(model.decoder.layers) == 6
    assert model.encoder.layers[0].linear1.out_features == 2048
    encoder = model.encoder
    assert encoder.enable_nested_tensor and encoder.mask_check and not encoder.use_nested_tensor
    assert nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, batch_first=True), 1
    ).use_nested_tensor
    assert nn.TransformerDecoderLayer(8, 2, activation="gelu").activation is F.gelu


def test_a_module_activation_is_a_child_and_a_callable_is_used_as_it_is(float64):
    layer = nn.TransformerEncoderLayer(4, 2, 6, activation=nn.GELU())
    assert layer.activation_relu_or_gelu == 2
    assert "(activation): GELU(approximate='none')" in repr(layer)
    calls = []
    layer = nn.TransformerEncoderLayer(4, 2, 6, activation=lambda x: calls.append(1) or x.tanh())
    assert layer.activation_relu_or_gelu == 0
    layer(ta.randn(3, 2, 4))
    assert calls == [1]


def test_device_and_dtype_arguments(float64):
    ta.set_default_dtype(np.float32)
    layer = nn.TransformerDecoderLayer(4, 2, 6, device="cpu", dtype=ta.float64)
    assert {p.dtype for p in layer.parameters()} == {np.dtype(np.float64)}
    model = nn.Transformer(4, 2, 1, 1, 6, dtype=ta.float64)
    assert {p.dtype for p in model.parameters()} == {np.dtype(np.float64)}
    with pytest.raises(ValueError, match="CPU only"):
        nn.TransformerEncoderLayer(4, 2, 6, device="cuda")


def test_dropout_is_active_in_train_mode_only(float64):
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.5)
    x = ta.randn(3, 2, 4)
    assert not np.allclose(layer(x).numpy(), layer(x).numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).numpy(), layer(x).numpy())


def test_the_causal_hint_replaces_the_mask_as_in_pytorch(float64):
    """PyTorch's `is_causal=True` is a promise that the mask is causal; without a padding mask
    the causal mask is what is applied. `is_causal=None` (the stacks' default) detects it."""
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0)
    x = ta.randn(3, 2, 4)
    causal = nn.Transformer.generate_square_subsequent_mask(3, dtype=ta.float64)
    wrong = np.zeros((3, 3))
    np.testing.assert_allclose(
        layer(x, src_mask=wrong, is_causal=True).numpy(), layer(x, src_mask=causal).numpy()
    )
    assert not np.allclose(layer(x, src_mask=wrong).numpy(), layer(x, src_mask=causal).numpy())
    np.testing.assert_allclose(layer(x, is_causal=True).numpy(), layer(x, src_mask=causal).numpy())
    seen = []
    encoder = nn.TransformerEncoder(layer, 1)
    original = type(layer).forward

    def spy(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        seen.append(is_causal)
        return original(self, src, src_mask, src_key_padding_mask, is_causal)

    encoder.layers[0].forward = spy.__get__(encoder.layers[0])
    encoder(x, mask=causal)
    encoder(x, mask=np.triu(np.ones((3, 3), bool), 1))
    encoder(x, mask=wrong)
    encoder(x)
    assert seen == [True, True, False, False]


def test_a_fully_masked_query_gets_zeros_without_weights_and_nan_with_them(float64):
    """MultiheadAttention with need_weights=False (as the transformer layers call it) runs
    PyTorch's fused attention: a query with no key allowed gets zero attention, so the output
    is the out_proj bias. With the weights, PyTorch's softmax of all -inf gives NaN."""
    mha = nn.MultiheadAttention(4, 2, batch_first=True)
    with ta.no_grad():
        mha.out_proj.bias.copy_(ta.tensor([0.1, 0.2, 0.3, 0.4], dtype=ta.float64))
    x = ta.randn(2, 3, 4)
    padding = np.array([[False, False, True], [True, True, True]])
    out, weights = mha(x, x, x, key_padding_mask=padding, need_weights=False)
    assert weights is None
    np.testing.assert_allclose(out.numpy()[1], [[0.1, 0.2, 0.3, 0.4]] * 3)
    with np.errstate(invalid="ignore"):
        out, weights = mha(x, x, x, key_padding_mask=padding)
    assert np.isnan(out.numpy()[1]).all() and not np.isnan(out.numpy()[0]).any()


def test_a_float_mask_that_requires_grad_gets_its_gradient(float64):
    layer = nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0)
    bias = ta.tensor(np.zeros((3, 3)), requires_grad=True)
    layer(ta.randn(3, 2, 4), src_mask=bias).pow(2).sum().backward()
    assert bias.grad is not None and np.abs(np.asarray(bias.grad)).max() > 0


@pytest.mark.filterwarnings("ignore:Support for mismatched")
def test_a_tiny_encoder_layer_passes_gradcheck(float64):
    layer = nn.TransformerEncoderLayer(4, 2, 3, dropout=0.0, activation="gelu")
    names = [name for name, _ in layer.named_parameters()]
    x = ta.tensor(fixed_input((3, 2, 4), 0), requires_grad=True)
    mask = np.cos(np.arange(9.0)).reshape(3, 3)

    def call(src, *params):
        return nn.functional_call(
            layer, dict(zip(names, params)), src, src_mask=mask, src_key_padding_mask=KPM
        )

    assert ta.gradcheck(call, [x, *layer.parameters()])


def test_a_tiny_pre_norm_decoder_layer_passes_gradcheck(float64):
    layer = nn.TransformerDecoderLayer(4, 2, 3, dropout=0.0, batch_first=True, norm_first=True)
    names = [name for name, _ in layer.named_parameters()]
    tgt = ta.tensor(fixed_input((2, 2, 4), 1), requires_grad=True)
    memory = ta.tensor(fixed_input((2, 3, 4), 2), requires_grad=True)

    def call(t, m, *params):
        return nn.functional_call(
            layer, dict(zip(names, params)), t, m, tgt_is_causal=True, memory_key_padding_mask=KPM
        )

    assert ta.gradcheck(call, [tgt, memory, *layer.parameters()])


def test_layer_norm_without_bias_or_affine_as_pytorch(float64):
    x = ta.tensor(fixed_input((2, 4), 0))
    plain = F.layer_norm(x, (4,)).numpy()
    no_bias = nn.LayerNorm(4, bias=False)
    assert [n for n, _ in no_bias.named_parameters()] == ["weight"] and no_bias.bias is None
    with ta.no_grad():
        no_bias.weight.mul_(2.0)
    np.testing.assert_allclose(no_bias(x).numpy(), 2 * plain)
    bare = nn.LayerNorm(4, elementwise_affine=False)
    assert list(bare.parameters()) == [] and bare.weight is None and bare.state_dict() == {}
    np.testing.assert_allclose(bare(x).numpy(), plain)


# ------------------------------------------------------------------------------------ errors
def test_transformer_shape_errors_name_the_shapes():
    model = nn.Transformer(8, 2, 1, 1, 16)
    src, tgt = ta.randn(5, 3, 8), ta.randn(4, 3, 8)
    with pytest.raises(RuntimeError, match=r"Transformer: the batch number of src and tgt must "
                       r"be equal \(axis 1 with batch_first=False.*src \(5, 3, 8\) and tgt "
                       r"\(4, 2, 8\)"):  # fmt: skip
        model(src, ta.randn(4, 2, 8))
    with pytest.raises(ValueError, match=r"feature number of src and tgt must be equal to "
                       r"d_model=8 .*src \(5, 3, 6\)"):  # fmt: skip
        model(ta.randn(5, 3, 6), ta.randn(4, 3, 6))
    with pytest.raises(RuntimeError, match=r"TransformerDecoder 'decoder': tgt_mask of shape "
                       r"\(5, 5\) does not fit tgt \(4, 3, 8\).*expected \(L, S\) = \(4, 4\) or "
                       r"\(N\*num_heads, L, S\) = \(6, 4, 4\)"):  # fmt: skip
        model(src, tgt, tgt_mask=np.zeros((5, 5)))
    with pytest.raises(ValueError, match=r"TransformerEncoder 'encoder': src_key_padding_mask "
                       r"of shape \(5, 3\) .*expected \(N, S\) = \(3, 5\)"):  # fmt: skip
        model(src, tgt, src_key_padding_mask=np.zeros((5, 3), bool))
    with pytest.raises(ValueError, match=r"memory_key_padding_mask of shape \(3, 4\) "):
        model(src, tgt, memory_key_padding_mask=np.zeros((3, 4), bool))


def test_layer_errors_name_the_layer_and_the_shapes():
    encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16), 2)
    with pytest.raises(ValueError, match=r"TransformerEncoderLayer 'layers.1': expected src of "
                       r"shape \(S, N, d_model\).*d_model=8; got shape \(5, 3, 7\)"):  # fmt: skip
        encoder.layers[1](ta.randn(5, 3, 7))
    with pytest.raises(ValueError, match=r"got shape \(2, 5, 3, 8\)"):
        encoder(ta.randn(2, 5, 3, 8))
    with pytest.raises(RuntimeError, match=r"TransformerEncoder: mask of shape \(4, 5, 5\).*"
                       r"\(N\*num_heads, L, S\) = \(6, 5, 5\)"):  # fmt: skip
        encoder(ta.randn(5, 3, 8), mask=np.zeros((4, 5, 5)))
    with pytest.raises(TypeError, match="mask must be a bool mask .* got dtype int64"):
        encoder(ta.randn(5, 3, 8), mask=np.zeros((5, 5), int))
    decoder = nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)
    with pytest.raises(RuntimeError, match=r"TransformerDecoderLayer: the batch number of tgt and "
                       r"memory must be equal \(axis 0 with batch_first=True"):  # fmt: skip
        decoder(ta.randn(3, 4, 8), ta.randn(2, 5, 8))
    with pytest.raises(ValueError, match=r"memory_mask of shape \(5, 4\).*\(L, S\) = \(4, 5\)"):
        decoder(ta.randn(3, 4, 8), ta.randn(3, 5, 8), memory_mask=np.zeros((5, 4)))
    with pytest.raises(TypeError, match="TransformerDecoderLayer 'x': memory must be a Tensor"):
        nn.ModuleDict({"x": decoder})["x"](ta.randn(3, 4, 8), np.zeros((3, 5, 8)))


def test_multihead_attention_errors_name_the_layer_and_the_shapes():
    mha = nn.MultiheadAttention(8, 2)
    q, kv = ta.randn(3, 2, 8), ta.randn(4, 2, 8)
    with pytest.raises(ValueError, match=r"query and key have different batch sizes \(axis 1, "
                       r"batch_first=False\): query \(3, 2, 8\), key \(4, 3, 8\)"):  # fmt: skip
        mha(q, ta.randn(4, 3, 8), ta.randn(4, 3, 8))
    with pytest.raises(ValueError, match=r"width embed_dim=8 .*query \(3, 2, 6\)"):
        mha(ta.randn(3, 2, 6), kv, kv)
    with pytest.raises(ValueError, match=r"key and value must have the same shape"):
        mha(q, kv, ta.randn(5, 2, 8))
    with pytest.raises(ValueError, match=r"all be 3-D \(batched\) or all 2-D"):
        mha(q, kv[0], kv[0])
    with pytest.raises(RuntimeError, match=r"MultiheadAttention: attn_mask of shape \(3, 3\) "
                       r"does not fit query \(3, 2, 8\) and key \(4, 2, 8\)"):  # fmt: skip
        mha(q, kv, kv, attn_mask=np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"key_padding_mask of shape \(4,\) .*\(N, S\) = \(2, 4\)"):
        mha(q, kv, kv, key_padding_mask=np.zeros(4, bool))
    unbatched = mha(q[:, 0], kv[:, 0], kv[:, 0], attn_mask=np.zeros((2, 3, 4)))[0]
    assert unbatched.shape == (3, 8)  # an unbatched input takes a (num_heads, L, S) mask
    with pytest.raises(ValueError, match=r"or \(num_heads, L, S\) = \(2, 3, 4\)"):
        mha(q[:, 0], kv[:, 0], kv[:, 0], attn_mask=np.zeros((4, 3, 4)))


def test_constructor_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not 'tanh'"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(ValueError, match="activation should be relu/gelu"):
        nn.TransformerDecoderLayer(8, 2, activation="swish")
    with pytest.raises(TypeError, match="activation must be 'relu', 'gelu' or a callable"):
        nn.TransformerEncoderLayer(8, 2, activation=3)
    with pytest.raises(ValueError, match="embed_dim=8 must be divisible by num_heads=3"):
        nn.TransformerEncoderLayer(8, 3)
    with pytest.raises(TypeError, match="TransformerEncoder: expected a layer Module"):
        nn.TransformerEncoder("layer", 2)
    with pytest.raises(ValueError, match="TransformerDecoder: num_layers must be >= 0, got -1"):
        nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2), -1)
    empty = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2), 0)
    with pytest.raises(IndexError, match="no layers to run .*num_layers=0"):
        empty(ta.randn(2, 1, 8))


def test_copy_deepcopy_of_a_transformer_is_independent():
    model = nn.Transformer(4, 2, 1, 1, 6)
    twin = copy.deepcopy(model)
    with ta.no_grad():
        twin.decoder.norm.weight.fill_(3.0)
    np.testing.assert_array_equal(model.decoder.norm.weight.numpy(), 1.0)


# --------------------------------------------------------------- what PyTorch 2.13 gave
# Made by print_pytorch_values() in tests/test_torch_transformer_vs_torch.py (torch 2.13.0, CPU,
# float64), from the same fixed parameters and inputs.
# fmt: off
PYTORCH_KEYS = {
    'ENCODER_LAYER_KEYS': [
        ('self_attn.in_proj_weight', (12, 4)),
        ('self_attn.in_proj_bias', (12,)),
        ('self_attn.out_proj.weight', (4, 4)),
        ('self_attn.out_proj.bias', (4,)),
        ('linear1.weight', (6, 4)),
        ('linear1.bias', (6,)),
        ('linear2.weight', (4, 6)),
        ('linear2.bias', (4,)),
        ('norm1.weight', (4,)),
        ('norm1.bias', (4,)),
        ('norm2.weight', (4,)),
        ('norm2.bias', (4,)),
    ],
    'DECODER_LAYER_KEYS': [
        ('self_attn.in_proj_weight', (12, 4)),
        ('self_attn.in_proj_bias', (12,)),
        ('self_attn.out_proj.weight', (4, 4)),
        ('self_attn.out_proj.bias', (4,)),
        ('multihead_attn.in_proj_weight', (12, 4)),
        ('multihead_attn.in_proj_bias', (12,)),
        ('multihead_attn.out_proj.weight', (4, 4)),
        ('multihead_attn.out_proj.bias', (4,)),
        ('linear1.weight', (6, 4)),
        ('linear1.bias', (6,)),
        ('linear2.weight', (4, 6)),
        ('linear2.bias', (4,)),
        ('norm1.weight', (4,)),
        ('norm1.bias', (4,)),
        ('norm2.weight', (4,)),
        ('norm2.bias', (4,)),
        ('norm3.weight', (4,)),
        ('norm3.bias', (4,)),
    ],
    'TRANSFORMER_KEYS': [
        ('encoder.layers.0.self_attn.in_proj_weight', (12, 4)),
        ('encoder.layers.0.self_attn.in_proj_bias', (12,)),
        ('encoder.layers.0.self_attn.out_proj.weight', (4, 4)),
        ('encoder.layers.0.self_attn.out_proj.bias', (4,)),
        ('encoder.layers.0.linear1.weight', (6, 4)),
        ('encoder.layers.0.linear1.bias', (6,)),
        ('encoder.layers.0.linear2.weight', (4, 6)),
        ('encoder.layers.0.linear2.bias', (4,)),
        ('encoder.layers.0.norm1.weight', (4,)),
        ('encoder.layers.0.norm1.bias', (4,)),
        ('encoder.layers.0.norm2.weight', (4,)),
        ('encoder.layers.0.norm2.bias', (4,)),
        ('encoder.norm.weight', (4,)),
        ('encoder.norm.bias', (4,)),
        ('decoder.layers.0.self_attn.in_proj_weight', (12, 4)),
        ('decoder.layers.0.self_attn.in_proj_bias', (12,)),
        ('decoder.layers.0.self_attn.out_proj.weight', (4, 4)),
        ('decoder.layers.0.self_attn.out_proj.bias', (4,)),
        ('decoder.layers.0.multihead_attn.in_proj_weight', (12, 4)),
        ('decoder.layers.0.multihead_attn.in_proj_bias', (12,)),
        ('decoder.layers.0.multihead_attn.out_proj.weight', (4, 4)),
        ('decoder.layers.0.multihead_attn.out_proj.bias', (4,)),
        ('decoder.layers.0.linear1.weight', (6, 4)),
        ('decoder.layers.0.linear1.bias', (6,)),
        ('decoder.layers.0.linear2.weight', (4, 6)),
        ('decoder.layers.0.linear2.bias', (4,)),
        ('decoder.layers.0.norm1.weight', (4,)),
        ('decoder.layers.0.norm1.bias', (4,)),
        ('decoder.layers.0.norm2.weight', (4,)),
        ('decoder.layers.0.norm2.bias', (4,)),
        ('decoder.layers.0.norm3.weight', (4,)),
        ('decoder.layers.0.norm3.bias', (4,)),
        ('decoder.norm.weight', (4,)),
        ('decoder.norm.bias', (4,)),
    ],
}
PYTORCH = {
    'decoder layer, post-norm, masks of every kind': {
        "out": [
            -0.215000241300874, 0.961889295744419, 1.39257463718683, -1.48004459974205,
            -1.33392102269669, 0.09627784592262, 1.93776293174068, 0.296788655105087,
            0.142650472518917, -1.40684527307263, 1.07133794839784, 1.12448160523879,
            0.666534216251737, -1.14230810816656, -0.066562687513969, 1.37707537828486,
            1.43954759309549, -0.446855682860676, -0.306705819521478, -0.10453321903436,
            0.855074125422544, 0.924465457218844, 0.105466749306836, -1.39047208034191,
            -0.489880557989167, 0.665926927528776, 1.79643555772055, -1.23102168713742,
            -1.06144141781482, -0.39898357490409, 2.03978375164354, 0.423994013740856,
        ],
        "input grads": [
            [
                1.61659414645733, 0.98051109639721, -1.02317492218707, -1.44067282183762,
                -0.207360924418588, 0.20435954757467, -0.431102209948977, 0.720849413608528,
                0.408692552395667, -0.0692091181928775, -0.797514270141961, 0.566699015601113,
                0.428169327065616, -0.169841387508183, 0.00745671211697817, -0.172373346348971,
                -0.408848287970339, -1.2361914547438, 0.471318768613136, 1.3315577400995,
                0.639131851817145, -0.375609405873134, -0.515283624003462, 0.534252235673914,
                0.099970884161706, 0.843401693399917, -0.442083998600336, -0.509621151850175,
                0.0513037058391557, -0.241530321648509, -1.11810588794498, 1.51525086569406,
            ],
            [
                -0.00275917829250069, 0.0688159136210314, 0.0883124940574731, 0.0409759396369059,
                0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            ],
        ],
        "parameter grads": {
            'self_attn.in_proj_weight': [
                0.038394714235751, 3.15579756783033, -0.0462115627427511,
            ],
            'multihead_attn.in_proj_weight': [0.316039627946139, 3.63232903298615, 0],
            'norm3.weight': [5.62576900836121, 8.20111166855829, 1.08173558103753],
        },
    },
    'decoder layer, pre-norm, gelu, batch first, no bias': {
        "out": [
            -0.16092378576975, 1.27756387109609, 0.459178303316693, -0.447970957302411,
            -1.05699689186471, 0.0279504959349282, 0.615863780065845, 0.474086029386747,
            -1.21013174777498, -0.971615621512058, 0.170640785704269, 1.32934768376615,
            -0.0885079657636652, -0.816000744425488, -0.669293897737077, 0.790681170182156,
            0.844815371442185, 0.0661505316894027, -0.913772600298283, -0.535628863486184,
            0.563248155128668, 1.04898160537758, -0.150434550241108, -0.850382879607583,
            -0.245405551745167, 1.02180122841805, 0.740083908550979, -0.484041895270933,
            -1.04309824070755, -0.407301400069748, 0.86904436474341, 0.418649991889898,
        ],
        "input grads": [
            [
                0.658797157340211, 0.546856792815971, -0.275272799766789, -0.796218177668842,
                -0.652932679060721, 0.15200899245442, 0.904794551640563, 0.940220240559023,
                -0.295610728851653, -0.799410795139542, -0.715286760408347, -0.0809678423821499,
                1.40209845568715, 0.955667778245149, -0.189730516184345, -1.03968567221625,
                -1.00939560500286, -0.00905138016433624, 0.789777856374462, 0.644867636848502,
                0.443905138275675, -0.538280398564234, -1.11334956320165, -0.464716221648699,
                0.628601687717264, 1.02621107875203, 0.561436933337689, -0.446087367011704,
                -0.971111252909976, -0.951101874417001, -0.00945608081249078, 1.28999961982902,
            ],
            [
                -0.0263658678166892, -0.0100594319729858, 0.0138597814375918, 0.0272901885723055,
                -0.0269284915476856, -0.0231981044626502, -0.0019118544102495, 0.0208212489440636,
                0, 0, 0, 0, 0.0439612938780598, 0.0365150906194381, 0.00143499476463918,
                -0.0347310765192064, 0.0306768931732763, 0.0213943606852597, -0.00407899743980531,
                -0.0264654516235268, 0.00184946547234122, -0.00700720402553269, -0.010560961216296,
                -0.00612239350760634,
            ],
        ],
        "parameter grads": {
            'multihead_attn.out_proj.weight': [
                0.0950517519758627, 9.22105163193736, 1.15798786273257,
            ],
            'linear1.weight': [-0.0744210175482134, 25.7242190450711, 1.19195199541843],
            'norm2.weight': [-0.0356591171648775, 0.00219248446514868, -0.0323374595626949],
        },
    },
    'decoder of 2 layers': {
        "out": [
            -0.271741794541889, 0.305280419723654, 1.29851803904296, -1.30722688290411,
            -0.465018111802388, -0.9295168970849, 1.85294795104716, -0.251545694645214,
            0.477094629107815, -1.60884177350175, 0.786981273129697, 0.614906824400159,
            0.725080380207515, -1.49842691321116, 0.202564432046296, 0.837335880738454,
            0.9598975102096, -1.22527171403141, 0.548018887965794, -0.12729163707665,
            0.536725079562739, -0.0666129707516362, 0.849245577212841, -1.31631838558038,
            -0.267436207986764, -0.172840613467154, 1.60853460941603, -1.09346640904096,
            -0.0400430734237476, -1.19933815801594, 1.63836180533688, -0.193323048999149,
        ],
        "input grads": [
            [
                0.763310892018518, 1.0246431569193, -0.700243756568769, -0.682522292418828,
                -0.753169212953609, 1.19725691549888, -0.429667033318931, 0.0934392339029122,
                0.198148061697893, 0.0672747942361335, -0.622040901081904, 0.435200521598527,
                0.155020475653727, -0.136679306431809, 0.089677987073094, -0.137470532918877,
                -0.330849519760586, -1.20423935272392, 0.614922912712242, 0.930224359705252,
                0.393750425458305, -0.0311587352081094, -0.520581711923128, 0.338717866312299,
                -0.110053284048064, 0.915832098931272, -0.426026505635585, -0.274366648966575,
                -0.0130292033494876, -0.0517005031449271, -0.271172066949187, 0.364992562359824,
            ],
            [
                0.0155963189041319, 0.164287433086851, 0.188649093232642, 0.0702448806304105,
                0.0753531464902826, 0.175537148876597, 0.142878136596727, 0.00209179903632711, 0,
                0, 0, 0, 0.00584639273279368, 0.00798810977844772, 0.0040845845990531,
                -0.00291007277241544, -0.0327563347862013, 0.0213831803495381, 0.0593403309034057,
                0.0523899020705349, 0.00704053282000727, 0.059723015386752, 0.0672083105791675,
                0.0238316962265296,
            ],
        ],
        "parameter grads": {
            'layers.0.multihead_attn.in_proj_weight': [
                -0.119781959026401, 4.56878358369455, 0.074839058138427,
            ],
            'layers.1.norm3.bias': [0.587578204465525, 0.159261006851021, -0.0432939734262958],
        },
    },
    'encoder in eval mode without grad: padded positions are zeros': {
        "out": [
            -0.203945613623402, 0.897592372874908, 1.37028740932901, -1.62209315092084,
            0.396481124745389, 0.28792649432805, -0.0385251667383042, -0.335821749675688,
            0.396481124745389, 0.28792649432805, -0.0385251667383042, -0.335821749675688,
            0.396481124745389, 0.28792649432805, -0.0385251667383042, -0.335821749675688,
            0.396481124745389, 0.28792649432805, -0.0385251667383042, -0.335821749675688,
            0.396481124745389, 0.28792649432805, -0.0385251667383042, -0.335821749675688,
        ],
    },
    'encoder layer, is_causal with the causal mask, one sequence (S, E)': {
        "out": [
            -0.499406664778819, 1.14832774387375, 1.53162716382898, -1.32606379821809,
            -1.17969660847389, -0.336722961647484, 1.47073341546505, 1.20052264491825,
            -0.526809457456017, -0.850437069643253, 0.675237441505474, 1.80284970309447,
        ],
        "input grads": [
            [
                2.07652030912662, 0.816208650456901, -1.15897144610875, -1.85275487587679,
                -0.246745176241363, 0.460354951760524, 0.0369640534343912, -0.237155457566394,
                0.330553026245529, -0.164231009732155, -0.338089450862411, 0.211587487931597,
            ],
        ],
        "parameter grads": {
            'self_attn.in_proj_weight': [
                -0.375594310541658, 0.359475958307799, -0.00489847924072091,
            ],
            'norm2.weight': [4.08198612876561, 6.27767401812639, 0.379862937550786],
        },
    },
    'encoder layer, per-head bool mask, fully padded sequence': {
        "out": [
            -0.297734963211363, 0.869376689277337, 1.69270512409661, -1.42361828056927,
            -1.08965998742659, -0.372719789614827, 1.829955122415, 0.764153495700636,
            -0.529263246962653, -0.942438422236375, 0.934868410856104, 1.6417017249498,
            0.0615561383798156, -0.85277779590854, -0.0828239042614534, 1.87673849071292,
            1.36133746118539, 0.0401978232506224, -1.01300448650181, 0.280019679019992,
            0.829454527871527, 1.32891863368433, -0.245643112863112, -1.29866428834326,
        ],
        "input grads": [
            [
                1.52912264181217, 0.684555494648672, -0.902818930153758, -1.28481030124021,
                -0.357383250979469, 0.420855246458455, -0.231477782705606, 0.16800578722662,
                0.334468228521812, -0.222773136293148, -0.40767065973625, 0.295975567507585,
                0.555874128667602, -0.0763228407503067, -0.342984062392927, -0.136567225524368,
                -0.757025290152081, -1.09093190190612, -0.145424515219641, 1.99338170727784,
                1.18237032438787, -0.721472774883793, -0.928012203176495, 0.467114653672418,
            ],
        ],
        "parameter grads": {
            'self_attn.in_proj_weight': [0.29014573251391, 0.146538834537181, 0],
            'linear1.bias': [0.851658030502685, 2.17916726197791, 1.31450792185576],
        },
    },
    'encoder layer, post-norm, relu, bool masks': {
        "out": [
            -0.5004986935121, 1.14869942329417, 1.53277210196522, -1.32633990133701,
            -1.11256031999542, -0.423143769470718, 1.59726418067352, 1.08614977393396,
            -0.539998518471214, -0.859139971323559, 0.721349327929024, 1.78105520329884,
            0.240508515296236, -1.01896071805531, 0.0332767410367106, 1.72741640108893,
            1.4660789442611, -0.244979173015579, -0.748070035466907, 0.199190409660055,
            1.1469591718413, 0.894040278497325, -0.108817953430031, -1.33729529951068,
        ],
        "input grads": [
            [
                2.02021033449379, 0.866487685887872, -1.04116801139311, -1.76020130711452,
                -0.349121606645348, 0.43387344629221, -0.136193074184736, -0.139836471855032,
                0.335024272674129, -0.190637358121477, -0.367736810042635, 0.223349895489983,
                0.650522811547278, -0.12466422539728, -0.220560372132131, -0.267288269991112,
                -0.61253483448885, -1.15760628171896, 0.0972634759316839, 1.67287764027613,
                0.738770359134294, -0.411935156474907, -0.662936057585773, 0.72854480266276,
            ],
        ],
        "parameter grads": {
            'self_attn.in_proj_weight': [
                -1.46919745495396, 2.65225092293319, -0.0160370528996654,
            ],
            'linear1.weight': [-0.712613926646533, 7.53104010836969, -1.31058650802666],
            'norm1.weight': [-1.07796988862691, 1.96727182282372, -0.755330090807488],
            'norm2.bias': [-0.540914540019298, 0.779862306418672, 0.495132885550274],
        },
    },
    'encoder layer, pre-norm, gelu, batch first, float masks': {
        "out": [
            0.318172095509069, 0.816778083303019, 0.599350635866689, -0.625078402542639,
            -0.302075782890382, -0.0696267395686013, 0.654103202451557, -0.0121886732552486,
            -0.424202353951926, -1.22112425021347, 0.0526789275712697, 0.712002311258103,
            0.436876931959197, -1.45502967853579, -0.587358668007134, 0.279283002512679,
            1.29670589238114, -0.434875891934462, -0.783125598334553, -0.689509853239915,
            0.894554584416781, 0.345611095819063, -0.0951737418718162, -0.982170013266093,
        ],
        "input grads": [
            [
                -0.169164775861432, 0.0775129562786949, 0.199824274674088, 0.0259905176292013,
                -0.633370273641701, 0.289720591336475, 1.05681684382754, 0.630923944070974,
                -0.153048720615065, -0.88198498789815, -0.910008118825279, 0.0537657005568028,
                0.927259223142956, 0.860762759774134, 0.186354258102403, -0.846026195487792,
                -0.92338144188837, -0.222174143278162, 0.710220462221188, 0.851533631001112,
                0.566920389533192, -0.69307949941277, -1.11472294126838, -0.431558993990956,
            ],
        ],
        "parameter grads": {
            'self_attn.in_proj_bias': [
                -0.147849519137401, 0.0102515987331026, -0.0037719637375072,
            ],
            'self_attn.out_proj.weight': [
                0.212746984193209, 1.77859849025125, -0.135232236278966,
            ],
            'linear2.bias': [-0.540914540019298, 0.779862306418672, 0.495132885550274],
            'norm1.weight': [0.105759092761905, 0.012448175631623, 0.00551065886021829],
        },
    },
    'encoder of 2 layers with a final norm, causal mask detected': {
        "out": [
            -0.203945613623402, 0.897592372874908, 1.37028740932901, -1.62209315092084,
            -0.593295829340259, -0.81046034521952, 0.677203620635068, 0.951520124580273,
            -0.0649381675907053, -1.09097363934225, 0.203789565775676, 1.13930220151801,
            0.358230801235109, -1.12621000437955, -0.245074338736651, 1.18165216891451,
            1.95000524164829, -0.584751532467455, -1.13881003578773, -0.0105721357909601,
            1.47244737418301, 1.10357619945236, -0.31140776589956, -1.85885697071514,
        ],
        "input grads": [
            [
                2.0924449285375, 0.77744767871336, -1.04438345689683, -1.83151188339143,
                -0.320891732340258, 0.683487231087666, 0.253922940571666, -0.741337055105623,
                0.085683003454267, -0.00391255340121192, -0.0980011565392246, 0.208171506797351,
                0.167406670464165, -0.0153448523448032, -0.0212475886059488, -0.00661606069002334,
                -1.01061102647149, -1.73716775046323, 0.175203796556033, 2.66572795604228,
                0.952974910031915, -0.603393516706998, -0.989626458862436, 0.806645626515836,
            ],
        ],
        "parameter grads": {
            'layers.0.self_attn.in_proj_weight': [
                -0.318095312894128, 2.30535613848005, 0.0285457922350101,
            ],
            'layers.1.linear2.weight': [
                4.44089209850063e-16, 9.02840136802232, -0.053692476987878,
            ],
            'norm.weight': [0.563762675813145, 6.16584857413498, -0.927911044893925],
        },
    },
    'transformer, batch first, pre-norm, gelu': {
        "out": [
            1.29620661747483, 0.31809139670441, -0.780199651100147, -1.43470997272041,
            -0.0650725333831384, 0.376472685895032, 0.51438387725908, -1.61259472014338,
            -0.463085601907167, -1.18227832501857, 1.19234873709655, -0.547911052465247,
            0.21019932045665, -2.00856561486382, 0.449060599581675, 0.35244575929727,
            1.32320005200265, -1.89125204445962, -0.269753177385455, 0.0204432819713491,
            1.73830231441016, -0.424264064822854, -0.74454015221834, -1.1738911992565,
            1.16021197567456, 0.234016817211955, -0.413051190029042, -1.60323318520692,
            -0.309023166238422, 0.0702448712445095, 0.836872363326385, -1.44950176237009,
        ],
        "input grads": [
            [
                0.0917206960201429, -0.12172751977809, -0.128629255113313, 0.15863607887126,
                -0.122527817621622, -0.167841142417983, -0.119317802008624, 0.409686762048229,
                -0.130008656379315, 0.060831458049406, 0.0528105985171817, 0.0163665998127278,
                -0.0351857661531221, -0.0132623431671611, 0.0170676076002978, 0.0313805017199853,
                -0.00445420226743745, 0.0286689277204154, 0.00156347205979583, -0.0257781975127738,
                0.00414643633933374, 0.00392740893552226, -0.0145263843955415, 0.00645253912068551,
            ],
            [
                0.0958046779713437, -0.0512700650157324, -0.131366063545976, 0.0868314505903645,
                -1.71987090207096, 0.113616164028429, 0.873287348086341, 0.732967389956194,
                0.424999920381372, -0.974648497844815, -0.249850083970879, 0.799498661434321,
                0.630557342743727, -0.0425719661586024, 0.173846206474861, -0.761831583059986,
                -0.996390540717778, -0.618087592353093, 0.588553193123949, 1.02592493994692,
                0.127664828671836, -0.12047925379325, -0.320148181245916, 0.31296260636733,
                -0.318552090459236, 0.292916613645702, 0.14487360586094, -0.119238129047407,
                -1.14093465011592, -0.366358441572733, 0.781725782672332, 0.725567309016323,
            ],
        ],
        "parameter grads": {
            'encoder.layers.0.linear1.weight': [
                -0.122496556696362, 0.929254492490222, 0.181200984961606,
            ],
            'decoder.layers.0.norm2.weight': [
                0.397004214731141, 0.0626527398711087, 0.0668146136691606,
            ],
        },
    },
    'transformer, sequence first': {
        "out": [
            1.37148277439243, 0.530373694450596, 0.337472870862705, -2.02403689206057,
            -0.0440539470611767, 0.850877764396184, 1.1349668418339, -1.75217100407036,
            0.143956592911308, -0.883556165242127, 1.60730388694373, -0.826176330655911,
            0.767621990762711, -1.63627322590466, 0.912306290111607, -0.0905425588426569,
            1.23092744275258, -1.69321091546996, 0.417548130697589, -0.00713967562762932,
            2.03962495530221, -0.625918668162991, 0.0720742541214392, -1.36728284750791,
            1.22065500701169, 0.769073435169048, 0.288326991914718, -2.05240618146072,
            -0.066344440229652, 0.380612899538808, 1.42999554657176, -1.58784590141103,
        ],
        "input grads": [
            [
                0.0828027025438357, 0.0493560695224492, -0.059299095876804, -0.0766867491441347,
                -0.00374480740265999, -0.00360001689926781, -0.0174207309805839,
                0.0362776023626174, -0.0239668610972618, 0.01386663395732, 0.019750331266137,
                -0.012574043091277, 0.00196928496279135, 0.000317439432383348,
                -0.00462765990689953, -0.000769178301155205, 0, 0, 0, 0, -0.0437795064334482,
                0.0445364791905359, 0.0255124762495104, -0.023946727180234,
            ],
            [
                0.0507140640809927, 0.538159562917367, -0.539526741217669, 0.26088871298591,
                -1.33310280012651, -0.332296857422336, 0.499872518730687, 1.37825792936853,
                0.213243470755562, -0.691471139783548, -0.145429115226761, 0.62171846591817,
                0.0285718985122073, -0.0919358335244484, 0.571088001068362, -0.311170203295364,
                -0.601418880299259, 0.116663312018315, 0.309617396416512, 0.299463713435368,
                -0.0927917765483611, 0.588972838911556, -0.809661255038952, 0.472799828355523,
                -0.309102649411691, 0.394541143978622, -0.0262692983650465, -0.000409392057151188,
                -0.664405296676525, -0.926668926632782, 0.413447918572101, 1.21219432481139,
            ],
        ],
        "parameter grads": {
            'encoder.layers.0.self_attn.in_proj_weight': [
                -0.000458423771668164, 0.000593287053829184, 0.00128931208654911,
            ],
            'encoder.norm.weight': [0.472078522802359, 0.0768351195769998, 0.100390715352022],
            'decoder.layers.1.multihead_attn.in_proj_weight': [
                0.257213146122427, 1.61610083859159, 0.0314849526762227,
            ],
            'decoder.norm.bias': [0.587578204465525, 0.159261006851021, -0.0432939734262958],
        },
    },
}
# fmt: on
