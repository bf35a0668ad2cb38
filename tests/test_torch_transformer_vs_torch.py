"""nn.Transformer and its layers against PyTorch itself (skipped without torch): the same
parameters (a PyTorch state_dict loaded as is) and the same float64 inputs in both libraries,
on random configurations — outputs, the inputs' gradients and every parameter's gradient;
eval mode without gradients (PyTorch's fused and nested-tensor paths); the warnings; the
signatures. `print_pytorch_values()` prints the numbers tests/test_torch_transformer.py keeps:
`PYTHONPATH=.:tests python -c "from test_torch_transformer_vs_torch import
print_pytorch_values as p; p()"` with torch installed."""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import test_torch_transformer as fixed  # noqa: E402

import tinygrad_attn as ta  # noqa: E402


@pytest.fixture
def float64():
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ta.set_default_dtype(previous)
    torch.set_default_dtype(torch.float32)


def _pair(make):
    """(PyTorch's module, ours) with PyTorch's parameters loaded into ours."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's enable_nested_tensor notice
        theirs = make(torch)
    ours = make(ta)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return theirs, ours


def _run(library, module, arrays, keywords, train=True):
    """Output and gradients (inputs first, then every parameter in order) of a weighted sum
    of `module(*arrays, **keywords)`; in eval mode without gradients, the output only."""
    module.train(train)
    inputs = [library.tensor(a, requires_grad=train) for a in arrays]
    given = {k: library.tensor(v) if isinstance(v, np.ndarray) else v for k, v in keywords.items()}
    if not train:
        with library.no_grad():
            return module(*inputs, **given).numpy(), []
    out = module(*inputs, **given)
    weights = np.cos(np.arange(out.numel())).reshape(tuple(out.shape))
    (out * library.tensor(weights)).sum().backward()
    grads = [np.asarray(t.grad) for t in inputs]
    grads += [np.asarray(p.grad) for _, p in module.named_parameters()]
    return out.detach().numpy(), grads


def _compare(make, arrays, keywords, train=True):
    theirs, ours = _pair(make)
    out_t, grads_t = _run(torch, theirs, arrays, keywords, train)
    out_o, grads_o = _run(ta, ours, arrays, keywords, train)
    np.testing.assert_allclose(out_o, out_t, rtol=1e-10, atol=1e-12)
    assert len(grads_o) == len(grads_t)
    for got, expected in zip(grads_o, grads_t):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def _random_masks(rng, batch, length, source, heads, prefix, padding_name, unbatched=False):
    """A random choice of attention mask (none, bool, float, per head) and padding mask
    (none, bool, float) for one attention, by the names the layer takes them."""
    masks = {}
    kind = rng.integers(4)
    if kind == 1:
        masks[prefix] = rng.random((length, source)) > 0.7
    elif kind == 2:
        masks[prefix] = rng.standard_normal((length, source))
    elif kind == 3:
        masks[prefix] = rng.random((max(batch, 1) * heads, length, source)) > 0.7
    kind = rng.integers(3)
    padded = rng.random((batch, source) if not unbatched else (source,)) > 0.6
    if kind == 1:
        masks[padding_name] = padded
    elif kind == 2 and not (prefix in masks and masks[prefix].dtype == bool):
        masks[padding_name] = np.where(padded, -np.inf, 0.0)
    return masks


SEEDS = range(12)


def _config(rng):
    heads = int(rng.choice([1, 2, 4]))
    return {
        "d_model": heads * int(rng.integers(1, 4)),
        "nhead": heads,
        "dim_feedforward": int(rng.integers(1, 9)),
        "dropout": 0.0,
        "activation": str(rng.choice(["relu", "gelu"])),
        "layer_norm_eps": float(rng.choice([1e-5, 1e-2])),
        "batch_first": bool(rng.integers(2)),
        "norm_first": bool(rng.integers(2)),
        "bias": bool(rng.integers(4)),  # mostly True
    }


def _sequence(rng, config, batch, length, unbatched=False):
    e = config["d_model"]
    if unbatched:
        return rng.standard_normal((length, e))
    shape = (batch, length, e) if config["batch_first"] else (length, batch, e)
    return rng.standard_normal(shape)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_encoder_layers_equal_pytorchs(seed, float64):
    rng = np.random.default_rng(seed)
    config = _config(rng)
    batch, length, unbatched = int(rng.integers(1, 4)), int(rng.integers(1, 6)), seed % 5 == 4
    x = _sequence(rng, config, batch, length, unbatched)
    masks = _random_masks(
        rng,
        0 if unbatched else batch,
        length,
        length,
        config["nhead"],
        "src_mask",
        "src_key_padding_mask",
        unbatched,
    )
    if unbatched:
        masks.pop("src_mask", None)  # (a per-head mask of an unbatched input differs in shape)
    _compare(lambda L: L.nn.TransformerEncoderLayer(**config), [x], masks)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_decoder_layers_equal_pytorchs(seed, float64):
    rng = np.random.default_rng(100 + seed)
    config = _config(rng)
    batch, length, source = (int(n) for n in rng.integers(1, 5, size=3))
    tgt, memory = _sequence(rng, config, batch, length), _sequence(rng, config, batch, source)
    heads = config["nhead"]
    masks = _random_masks(rng, batch, length, length, heads, "tgt_mask", "tgt_key_padding_mask")
    masks.update(
        _random_masks(rng, batch, length, source, heads, "memory_mask", "memory_key_padding_mask")
    )
    _compare(lambda L: L.nn.TransformerDecoderLayer(**config), [tgt, memory], masks)


@pytest.mark.parametrize("seed", range(6))
def test_random_transformers_equal_pytorchs(seed, float64):
    rng = np.random.default_rng(200 + seed)
    config = _config(rng)
    config.update(num_encoder_layers=int(rng.integers(1, 3)), num_decoder_layers=2)
    batch, length, source = (int(n) for n in rng.integers(1, 5, size=3))
    src, tgt = _sequence(rng, config, batch, source), _sequence(rng, config, batch, length)
    masks = {"tgt_mask": np.triu(np.full((length, length), -np.inf), 1)}
    padded = rng.random((batch, source)) > 0.6
    if seed % 2:
        masks.update(src_key_padding_mask=padded, memory_key_padding_mask=padded)
    _compare(lambda L: L.nn.Transformer(**config), [src, tgt], masks)


@pytest.mark.parametrize("mask_check", [True, False])
@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize(
    "padding",
    [
        [[0, 0, 0, 1, 1], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]],  # at the ends (and a whole row)
        [[0, 1, 0, 1, 1], [0, 0, 0, 0, 1], [0, 0, 0, 0, 0]],  # a hole: PyTorch checks, or not
    ],
)
def test_eval_mode_without_grad_equals_pytorchs_fast_paths(mask_check, heads, padding, float64):
    """In eval mode under no_grad PyTorch runs fused kernels and, for a batch-first encoder
    given a padding mask, nested tensors: zeros at the padded positions."""
    x = np.random.default_rng(heads).standard_normal((3, 5, 8))

    def make(L):
        layer = L.nn.TransformerEncoderLayer(8, heads, 16, dropout=0.0, batch_first=True)
        return L.nn.TransformerEncoder(layer, 2, L.nn.LayerNorm(8), mask_check=mask_check)

    padding = np.array(padding, dtype=bool)
    for keywords in (
        {"src_key_padding_mask": padding},
        {"src_key_padding_mask": np.where(padding, -np.inf, 0.0)},
    ):
        _compare(make, [x], keywords, train=False)
        _compare(make, [x], keywords, train=True)  # (no zeros: a graph is recorded)


def test_eval_mode_transformer_equals_pytorchs(float64):
    rng = np.random.default_rng(7)
    padded = np.array([[0, 0, 0, 1, 1], [0, 0, 1, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)
    _compare(
        lambda L: L.nn.Transformer(8, 2, 2, 2, 16, batch_first=True),
        [rng.standard_normal((3, 5, 8)), rng.standard_normal((3, 4, 8))],
        {
            "src_key_padding_mask": padded,
            "memory_key_padding_mask": padded,
            "tgt_mask": np.triu(np.full((4, 4), -np.inf), 1),
        },
        train=False,
    )


def test_the_fixed_cases_give_the_numbers_the_no_torch_tests_keep(float64):
    for name in sorted(fixed.CASES):
        expected = fixed.PYTORCH[name]
        ours = fixed.run_case(ta, name)[0]
        state = {k: torch.tensor(v) for k, v in fixed.fixed_state(ours).items()}
        theirs, inputs, out = fixed.run_case(torch, name, state)
        got = out.detach().numpy().reshape(-1)
        np.testing.assert_allclose(got, expected["out"], rtol=1e-13, atol=1e-15)
        for x, grad in zip(inputs, expected.get("input grads", [])):
            np.testing.assert_allclose(x.grad.numpy().reshape(-1), grad, rtol=1e-13, atol=1e-15)


def test_parameter_names_are_the_ones_the_no_torch_tests_keep():
    got = _pytorch_keys()
    assert got == fixed.PYTORCH_KEYS


def test_mismatched_mask_types_warn_as_in_pytorch(float64):
    theirs, ours = _pair(lambda L: L.nn.TransformerEncoderLayer(4, 2, 6, dropout=0.0))
    x = np.random.default_rng(0).standard_normal((3, 2, 4))
    keywords = {"src_mask": np.zeros((3, 3)), "src_key_padding_mask": np.zeros((2, 3), bool)}
    messages = []
    for library, module in ((torch, theirs), (ta, ours)):
        given = {k: library.tensor(v) for k, v in keywords.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module(library.tensor(x), **given)
        messages.append([str(w.message) for w in caught])
    assert messages[0] == messages[1] and len(messages[0]) == 1


@pytest.mark.parametrize(
    "name",
    [
        "TransformerEncoderLayer",
        "TransformerDecoderLayer",
        "TransformerEncoder",
        "TransformerDecoder",
        "Transformer",
    ],
)
def test_signatures_are_pytorchs(name):
    for method in ("__init__", "forward"):
        theirs = inspect.signature(getattr(getattr(torch.nn, name), method)).parameters
        ours = inspect.signature(getattr(getattr(ta.nn, name), method)).parameters
        assert list(ours) == list(theirs), (name, method)
        for key, parameter in theirs.items():
            default = parameter.default
            if callable(default):  # F.relu: the same function by name
                assert ours[key].default.__name__ == default.__name__
            else:
                assert ours[key].default == default, (name, method, key)
    theirs = inspect.signature(torch.nn.Transformer.generate_square_subsequent_mask)
    ours = inspect.signature(ta.nn.Transformer.generate_square_subsequent_mask)
    assert list(ours.parameters) == list(theirs.parameters)


def test_pytorchs_causal_mask_and_initialisation_spread(float64):
    for size in (0, 1, 4):
        np.testing.assert_array_equal(
            ta.nn.Transformer.generate_square_subsequent_mask(size).numpy(),
            torch.nn.Transformer.generate_square_subsequent_mask(size).numpy(),
        )
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(16, 2, 1, 1, 32)
    ours = ta.nn.Transformer(16, 2, 1, 1, 32)
    for (name, p_t), (_, p_o) in zip(theirs.named_parameters(), ours.named_parameters()):
        t, o = p_t.detach().numpy(), p_o.numpy()
        if t.ndim > 1:  # the same distribution: xavier's bound and standard deviation
            np.testing.assert_allclose(np.abs(o).max(), np.abs(t).max(), rtol=0.15, err_msg=name)
            np.testing.assert_allclose(o.std(), t.std(), rtol=0.25, err_msg=name)
        elif "norm" in name or "attn" in name:  # ones, or zeros for the attention biases
            np.testing.assert_array_equal(o, t, err_msg=name)


# ------------------------------------------------------------------- making the kept numbers
def _pytorch_keys() -> dict:
    made = {
        "ENCODER_LAYER_KEYS": torch.nn.TransformerEncoderLayer(4, 2, 6),
        "DECODER_LAYER_KEYS": torch.nn.TransformerDecoderLayer(4, 2, 6),
        "TRANSFORMER_KEYS": torch.nn.Transformer(4, 2, 1, 1, 6),
    }
    return {
        key: [(k, tuple(v.shape)) for k, v in module.state_dict().items()]
        for key, module in made.items()
    }


def _numbers(values, indent: str, before: int = 0) -> str:
    """`values` flattened, as a list literal of 15-digit numbers, lines under 100 columns
    (`before`: how many columns the first line already holds)."""
    items = [format(float(v), ".15g") for v in np.asarray(values, dtype=float).reshape(-1)]
    if before + len(", ".join(items)) + 4 < 100:
        return "[" + ", ".join(items) + "]"
    rows, row = [], []
    for item in items:
        if row and len(indent) + 4 + len(", ".join([*row, item])) > 98:
            rows.append(", ".join(row))
            row = []
        row.append(item)
    rows.append(", ".join(row))
    return "[\n" + "".join(f"{indent}    {row},\n" for row in rows) + indent + "]"


def print_pytorch_values() -> None:
    """Print PYTORCH_KEYS and PYTORCH for tests/test_torch_transformer.py."""
    torch.set_default_dtype(torch.float64)
    ta.set_default_dtype(np.float64)
    print("PYTORCH_KEYS = {")
    for key, items in _pytorch_keys().items():
        print(f"    {key!r}: [")
        for name, shape in items:
            print(f"        ({name!r}, {shape}),")
        print("    ],")
    print("}")
    print("PYTORCH = {")
    for name in sorted(fixed.CASES):
        ours = fixed.CASES[name][0](ta)
        state = {k: torch.tensor(v) for k, v in fixed.fixed_state(ours).items()}
        module, inputs, out = fixed.run_case(torch, name, state)
        print(f"    {name!r}: {{")
        print(f'        "out": {_numbers(out.detach().numpy(), "        ", 15)},')
        if fixed.CASES[name][3]:
            grads = [_numbers(x.grad.numpy(), "            ", 12) for x in inputs]
            print('        "input grads": [')
            for g in grads:
                print(f"            {g},")
            print("        ],")
            params = dict(module.named_parameters())
            print('        "parameter grads": {')
            for key in fixed.CASES[name][4]:
                numbers = fixed.fingerprint(params[key].grad.numpy())
                start = f"            {key!r}: "
                print(f"{start}{_numbers(numbers, '            ', len(start))},")
            print("        },")
        print("    },")
    print("}")
