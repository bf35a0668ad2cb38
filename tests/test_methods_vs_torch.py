"""Every Tensor method that PyTorch's Tensor has too (and every `torch.*` and `F.*` function both
have, with the tensor first), called the same way in both libraries with
generic arguments (no argument, a dim, dim and keepdim, two dims, a number, another tensor, a
shape) on float, int, bool and 0-d tensors: where both give a result it must be PyTorch's
(values, dtype, shape), and where PyTorch gives one, this package must too, except the
refusals listed below with their reasons. (Where PyTorch raises and this package answers,
nothing is asserted: a call PyTorch code never makes.) Skips without PyTorch."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import tinygrad_attn as ta

torch = pytest.importorskip("torch")

INPUTS = {
    "float": np.array([[1.5, -2.0, 4.0], [3.0, 0.0, -9.25]], dtype=np.float32),
    "int": np.array([[3, 1, 2], [0, 7, -5]], dtype=np.int64),
    "bool": np.array([[True, False, True], [False, False, True]]),
    "0-d": np.array(2.5, dtype=np.float32),
    "float64": np.array([0.25, -0.5, 2.0], dtype=np.float64),
}
OTHER = "other"  # stands for a second tensor: the input itself, or for "float" this one
SECOND = np.array([[0.5, 2.0, -1.0], [1.0, 3.0, 2.0]], dtype=np.float32)
CALLS = [
    ((), {}), ((0,), {}), ((-1,), {}), ((1,), {}), ((), {"dim": 0}),
    ((), {"dim": -1, "keepdim": True}), ((0, True), {}), ((2,), {}), ((OTHER,), {}),
    ((1.5,), {}), ((0, 1), {}), ((1, 0), {}), ((-1, 0), {}), (((1, 0),), {}), ((2, 3), {}),
    ((3, 2), {}), ((6,), {}), ((-1, 2), {}),
]  # fmt: skip
# Not called: what reads or changes state rather than computing (hooks, devices, storage,
# random fills), and attributes that are not methods.
NOT_CALLED = set(
    "backward register_hook retain_grad data grad grad_fn requires_grad is_leaf device T mT H "
    "mH real imag names layout output_nr storage_offset data_ptr untyped_storage storage "
    "share_memory_ pin_memory cuda cpu to numpy tolist item new_empty set_ apply_ map_ "
    "uniform_ normal_ random_ exponential_ bernoulli_ cauchy_ geometric_ log_normal_ dtype "
    "shape ndim is_cuda requires_grad_ detach_ element_size itemsize nbytes type "
    "is_contiguous stride is_shared register_post_accumulate_grad_hook grad_dtype "
    "retains_grad dim_order".split()
)
# PyTorch answers, this package refuses, on purpose:
REFUSED = {
    # `x.add(0, 1)`: PyTorch's deprecated `add(alpha, other)` form; here alpha is keyword-only
    "add": "legacy", "add_": "legacy", "sub": "legacy", "sub_": "legacy", "subtract": "legacy",
    # `True` as a dim or a size: PyTorch reads it as 1; here a bool is not an int
    "count_nonzero": "bool dim", "flip": "bool dim", "permute": "bool dim",
    "squeeze": "bool dim", "new_ones": "bool size", "new_zeros": "bool size",
    "expand": "bool size", "broadcast_to": "bool size",
    # `x.norm(y)`: p given as a tensor
    "norm": "tensor p",
    # an integer tensor to a negative integer power (PyTorch truncates 3 ** -5 to 0)
    "pow": "negative int power", "pow_": "negative int power",
}  # fmt: skip
# The same for the functions (`torch.einsum(x, [1, 0])`: the sublist form is not taken here).
REFUSED_FUNCTIONS = {
    "torch.einsum": "sublists", "torch.norm": "tensor p", "torch.pow": "negative int power",
    "F.linear": "1-D weight",
}  # fmt: skip
# Functions not called: state, randomness, creation from data, and what takes no tensor first.
FUNCTIONS_NOT_CALLED = set(
    "manual_seed seed set_default_dtype get_default_dtype set_grad_enabled no_grad enable_grad "
    "inference_mode compile save load set_num_threads get_num_threads set_rng_state "
    "get_rng_state set_float32_matmul_precision get_float32_matmul_precision is_grad_enabled "
    "is_inference_mode_enabled rand randn randint randperm normal multinomial empty empty_like "
    "rand_like randn_like dropout alpha_dropout feature_alpha_dropout dropout1d dropout2d "
    "dropout3d device tensor as_tensor from_numpy is_tensor typename "
    "use_deterministic_algorithms".split()
)


def names() -> list[str]:
    shared = set(dir(torch.Tensor)) & set(dir(ta.Tensor))
    return sorted(n for n in shared if not n.startswith("_") and n not in NOT_CALLED)


def functions() -> list[str]:
    """ "torch.name" and "F.name" for the functions both libraries have."""
    import torch.nn.functional as torch_F

    found = []
    for label, theirs, ours in (("torch", torch, ta), ("F", torch_F, ta.nn.functional)):
        for name in sorted(set(dir(theirs)) & set(dir(ours))):
            a, b = getattr(theirs, name), getattr(ours, name)
            plain = callable(a) and callable(b) and not isinstance(a, type)
            if plain and not isinstance(b, type) and not name.startswith("_"):
                if name not in FUNCTIONS_NOT_CALLED:
                    found.append(f"{label}.{name}")
    return found


def function_of(lib, qualified: str):
    label, name = qualified.split(".")
    if lib is torch:
        return getattr(torch if label == "torch" else torch.nn.functional, name)
    return getattr(ta if label == "torch" else ta.nn.functional, name)


def outcome(lib, name: str, kind: str, args: tuple, kwargs: dict):
    """What `tensor.name(*args, **kwargs)` (or, for "torch.f" / "F.f", `f(tensor, *args)`)
    gives in `lib`: a summary of the result, or ("error", its class name)."""
    tensor = lib.tensor(INPUTS[kind])
    second = lib.tensor(SECOND if kind == "float" else INPUTS[kind])
    args = [second if a is OTHER else a for a in args]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if "." in name:
                result = function_of(lib, name)(tensor, *args, **kwargs)
            else:
                result = getattr(tensor, name)(*args, **kwargs)
        return summary(result)
    except Exception as err:  # noqa: BLE001  (what each library raises is what is compared)
        return ("error", type(err).__name__)


def summary(result):
    """A result as comparable plain data."""
    if isinstance(result, (torch.Tensor, ta.Tensor)):
        array = result.detach().numpy() if isinstance(result, torch.Tensor) else result.numpy()
        values = array.astype(np.float64) if array.size <= 64 else None
        return ("tensor", str(array.dtype), tuple(array.shape), values)
    if (
        isinstance(result, tuple)
        and not hasattr(result, "_fields")
        and all(isinstance(v, int) for v in result)
    ):
        return ("shape", tuple(result))  # torch.Size and a tuple of ints alike
    if isinstance(result, (tuple, list)):
        return ("sequence", tuple(summary(r) for r in result))
    if isinstance(result, (bool, int, float)):
        return ("number", float(result))
    return ("object", type(result).__name__)


def same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    if a[0] == "tensor":
        if a[1:3] != b[1:3]:
            return False
        return a[3] is None or b[3] is None or np.allclose(a[3], b[3], 1e-4, 1e-5, True)
    if a[0] == "sequence":
        return len(a[1]) == len(b[1]) and all(same(p, q) for p, q in zip(a[1], b[1]))
    if a[0] == "number":
        return math.isclose(a[1], b[1], rel_tol=1e-4, abs_tol=1e-5) or (
            math.isnan(a[1]) and math.isnan(b[1])
        )
    return a == b


@pytest.mark.parametrize("name", names() + functions())
def test_the_method_answers_as_pytorchs(name):
    differ, refused = [], []
    for kind in INPUTS:
        for args, kwargs in CALLS:
            theirs = outcome(torch, name, kind, args, kwargs)
            ours = outcome(ta, name, kind, args, kwargs)
            if theirs[0] == "error":
                continue  # (PyTorch refuses: nothing to match)
            call = f"{name}({kind} tensor, *{args}, **{kwargs})"
            if ours[0] == "error":
                refused.append(f"{call}: PyTorch gives {theirs[:3]}, this package {ours}")
            elif not same(theirs, ours):
                differ.append(f"{call}:\n  PyTorch {theirs}\n  here    {ours}")
    assert not differ, "\n".join(differ)
    assert not refused or name in REFUSED or name in REFUSED_FUNCTIONS, "\n".join(refused)


def test_the_walk_covers_the_methods_and_functions():
    assert len(names()) >= 180 and len(functions()) >= 140


# ------------------------------------------------------------------ every nn layer both have
# Constructor arguments where a layer needs some; containers and layers with tests of their own
# (attention, transformer, embedding: tests/test_nn_vs_torch.py) are not walked here.
LAYER_ARGS = {
    "Linear": (4, 3), "LayerNorm": (4,), "RMSNorm": (4,), "Threshold": (0.1, 20.0),
    "Dropout": (0.0,), "Softmax": (-1,), "LogSoftmax": (-1,), "Softmin": (-1,),
    "Unflatten": (2, (2, 2)),
}  # fmt: skip
NOT_WALKED = set(
    "Module ModuleList ModuleDict Sequential ParameterList ParameterDict Parameter Buffer "
    "Transformer TransformerEncoder TransformerDecoder TransformerEncoderLayer "
    "TransformerDecoderLayer MultiheadAttention Embedding DataParallel "
    "DistributedDataParallel".split()
)
PAIR_LAYERS = {"PairwiseDistance", "CosineSimilarity"}
CLASS_LOSSES = {"CrossEntropyLoss", "NLLLoss"}


def layers() -> list[str]:
    shared = set(dir(torch.nn)) & set(dir(ta.nn))
    return sorted(
        n for n in shared if isinstance(getattr(torch.nn, n), type) and n not in NOT_WALKED
    )


def layer_outcome(lib, layer, name: str) -> tuple:
    """(output, the input's gradient) of `layer` on a fixed (2, 3, 4) float64 input."""
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    if name in CLASS_LOSSES:
        inputs = (lib.tensor(x.reshape(6, 4), requires_grad=True), lib.tensor([0, 1, 2, 3, 0, 1]))
    elif name == "BCELoss":
        probabilities, labels = 1 / (1 + np.exp(-x)), (x > 0).astype(np.float64)
        inputs = (lib.tensor(probabilities, requires_grad=True), lib.tensor(labels))
    elif name.endswith("Loss") or name in PAIR_LAYERS:
        inputs = (lib.tensor(x, requires_grad=True), lib.tensor(np.abs(x[::-1].copy()) / 3))
    else:
        inputs = (lib.tensor(x, requires_grad=True),)
    out = layer(*inputs)
    out.sum().backward()
    return out.detach().numpy(), inputs[0].grad.numpy()


@pytest.mark.parametrize("name", layers())
def test_the_layer_computes_as_pytorchs(name):
    args = LAYER_ARGS.get(name, ())
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(*args).double()
    ours = getattr(ta.nn, name)(*args).double()
    state = {k: ta.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()}
    ours.load_state_dict(state)
    assert repr(ours) == repr(theirs)
    expected, got = layer_outcome(torch, theirs, name), layer_outcome(ta, ours, name)
    rtol = 1e-7 if name == "Hardsigmoid" else 1e-10  # (PyTorch's: 1/6 as float32 in float64)
    for want, have in zip(expected, got):
        assert want.shape == have.shape
        np.testing.assert_allclose(have, want, rtol=rtol, atol=1e-12)
