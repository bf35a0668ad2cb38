"""nn.Module's API as PyTorch 2.13's (issues 24 and 27): registration and its errors, state_dict
values that share the parameters' memory, load_state_dict(strict=, assign=), dtype conversion
that keeps the Parameter objects, hooks, traversal, containers and their slicing. The expected
behaviour was read off PyTorch 2.13 (tests/test_nn_vs_torch.py compares the two directly when
torch is installed)."""

from __future__ import annotations

import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import nn


def _linear() -> nn.Linear:
    ta.manual_seed(0)
    return nn.Linear(2, 3)


# ------------------------------------------------------------------------------ Parameter
def test_parameter_shares_memory_and_is_a_leaf():
    t = ta.ones(3)
    p = nn.Parameter(t)
    assert isinstance(p, ta.Tensor) and p.requires_grad and p.is_leaf
    assert np.shares_memory(p.numpy(), t.numpy())
    computed = ta.ones(2, requires_grad=True) * 2
    assert nn.Parameter(computed).is_leaf  # a leaf, even made from a computed tensor
    assert type(p * 2) is ta.Tensor and type(p.detach()) is ta.Tensor
    assert repr(nn.Parameter()) == "Parameter containing:\ntensor([], requires_grad=True)"
    assert not nn.Parameter(ta.ones(2), requires_grad=False).requires_grad
    with pytest.raises(RuntimeError, match="only float tensors can require grad"):
        nn.Parameter(ta.arange(3))


def test_only_parameters_register_and_a_plain_tensor_in_a_parameter_slot_is_a_type_error():
    layer = _linear()
    layer.scale = ta.ones(3, requires_grad=True)  # PyTorch: an attribute, not a parameter
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    with pytest.raises(
        TypeError, match=r"cannot assign 'Tensor \(float32\)' as parameter 'weight'"
    ):
        layer.weight = ta.ones(3, 2)
    with pytest.raises(TypeError, match="nn.Parameter or None expected"):
        layer.weight = ta.ones(3, 2, requires_grad=True)
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]  # nothing dropped
    layer.weight = None
    assert [n for n, _ in layer.named_parameters()] == ["bias"] and layer.weight is None
    layer.weight = nn.Parameter(ta.ones(3, 2))
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert layer.weight.name == "weight"


def test_register_parameter_buffer_module_errors_are_pytorchs():
    m = nn.Module()
    with pytest.raises(TypeError, match="cannot assign 'Tensor"):
        m.register_parameter("w", ta.ones(2))
    with pytest.raises(KeyError, match="contain"):
        m.register_parameter("a.b", nn.Parameter(ta.ones(2)))
    with pytest.raises(KeyError, match="empty string"):
        m.register_parameter("", None)
    with pytest.raises(TypeError, match="should be a string"):
        m.register_parameter(3, None)
    m.register_parameter("w", None)
    assert list(m.named_parameters()) == [] and m.w is None and list(m.state_dict()) == []
    m.register_parameter("w", nn.Parameter(ta.ones(2)))  # the slot exists: allowed
    m.x = 3
    for register in (m.register_parameter, m.add_module):
        with pytest.raises(KeyError, match="attribute 'x' already exists"):
            register("x", None)
    with pytest.raises(KeyError, match="attribute 'w' already exists"):
        m.register_buffer("w", ta.ones(2))
    with pytest.raises(TypeError, match="cannot assign 'list' object to buffer 'b'"):
        m.register_buffer("b", [1])
    m.register_buffer("b", None)
    m.register_buffer("kept", ta.ones(2), persistent=False)
    assert list(m.state_dict()) == ["w"] and [n for n, _ in m.named_buffers()] == ["kept"]
    m.kept = ta.zeros(3)  # a buffer slot takes any tensor
    assert m.get_buffer("kept").shape == (3,)
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer 'kept'"):
        m.kept = 5
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("lin", 5)
    m.add_module("lin", nn.Linear(1, 1))
    m.register_module("r", None)
    assert [n for n, _ in m.named_children()] == ["lin"]
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'lin'"):
        m.lin = 5
    m.buf = nn.Buffer(ta.ones(2), persistent=False)
    assert type(m.buf) is ta.Tensor and "buf" in dict(m.named_buffers())
    assert "buf" not in m.state_dict()


def test_get_submodule_parameter_buffer():
    s = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert s.get_parameter("0.weight") is s[0].weight
    assert s.get_submodule("") is s and s.get_submodule("1") is s[1]
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        s.get_parameter("0.zz")
    with pytest.raises(AttributeError, match="has no attribute `weight`"):
        s.get_parameter("1.weight")
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        s.get_submodule("0.weight")
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        s.get_buffer("0.weight")


# ------------------------------------------------------------------------------ traversal
class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
        self.shared = self.a  # one module under two names
        self.own = nn.Parameter(ta.ones(1))
        self.register_buffer("mask", ta.ones(2))


def test_traversal_recurse_prefix_and_duplicates():
    net = _Net()
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["own"]
    assert len(list(net.parameters(recurse=False))) == 1
    names = [n for n, _ in net.named_parameters(prefix="net")]
    assert names == ["net.own", "net.a.weight", "net.a.bias", "net.b.0.weight", "net.b.0.bias"]
    every = [n for n, _ in net.named_parameters(remove_duplicate=False)]
    assert every[-2:] == ["shared.weight", "shared.bias"]
    assert [n for n, _ in net.named_modules()] == ["", "a", "b", "b.0", "b.1"]
    assert [n for n, _ in net.named_modules(prefix="m", remove_duplicate=False)][-1] == "m.shared"
    assert [n for n, _ in net.named_children()] == ["a", "b"]
    assert [n for n, _ in net.named_buffers(recurse=False)] == ["mask"]
    assert list(net.state_dict())[-2:] == ["shared.weight", "shared.bias"]  # as PyTorch


def test_train_eval_and_requires_grad_recurse_through_children():
    net = _Net()
    assert net.eval() is net and not net.b[1].training
    assert net.train() is net and net.b[1].training
    with pytest.raises(ValueError, match="bool"):
        net.train("yes")
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


# ----------------------------------------------------------------------------- state_dict
def test_state_dict_values_share_memory_so_copy_under_no_grad_loads():
    layer = _linear()
    state = layer.state_dict()
    assert isinstance(state, OrderedDict) and list(state) == ["weight", "bias"]
    weight = state["weight"]
    assert type(weight) is ta.Tensor and not weight.requires_grad and weight.is_leaf
    assert np.shares_memory(weight.numpy(), layer.weight.numpy())
    with ta.no_grad():
        weight.copy_(ta.full((3, 2), 0.5))  # from_pretrained-style loading
    np.testing.assert_array_equal(layer.weight.numpy(), np.full((3, 2), 0.5))
    assert layer.state_dict(keep_vars=True)["weight"] is layer.weight
    assert list(layer.state_dict(prefix="head.")) == ["head.weight", "head.bias"]


def test_load_state_dict_copies_in_place_and_reports_as_pytorch():
    layer = _linear()
    weight = layer.weight
    result = layer.load_state_dict({"weight": ta.zeros(3, 2), "bias": ta.ones(3)})
    assert layer.weight is weight and repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(weight.numpy(), np.zeros((3, 2)))
    result = layer.load_state_dict({"weight": ta.ones(3, 2)}, strict=False)
    assert repr(result) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=[])"
    with pytest.raises(RuntimeError, match="Missing key.*'bias'"):
        layer.load_state_dict({"weight": ta.ones(3, 2)})
    with pytest.raises(TypeError, match="dict-like"):
        layer.load_state_dict(5)
    layer.load_state_dict({"weight": ta.ones(3, 2, dtype=ta.float64), "bias": np.ones(3)})
    assert layer.weight.dtype == np.float32  # copy_ keeps the parameter's dtype


def test_load_state_dict_assign_puts_the_given_tensors_in():
    layer = _linear()
    layer.weight.requires_grad_(False)
    new = {"weight": ta.full((3, 2), 7.0), "bias": ta.ones(3, dtype=ta.float64)}
    layer.load_state_dict(new, assign=True)
    assert isinstance(layer.weight, nn.Parameter) and not layer.weight.requires_grad
    assert np.shares_memory(layer.weight.numpy(), new["weight"].numpy())
    assert layer.bias.dtype == np.float64 and layer.bias.requires_grad
    assert layer.weight.name == "weight"


# ----------------------------------------------------------------------------- conversion
def test_double_float_half_keep_the_parameter_objects_and_convert_grads():
    layer = _linear()
    layer(ta.ones(1, 2)).sum().backward()
    weight, grad = layer.weight, layer.weight.grad
    layer.register_buffer("count", ta.tensor([1, 2]))
    layer.register_buffer("scale", ta.ones(2))
    assert layer.double() is layer
    assert layer.weight is weight and weight.dtype == np.float64
    assert weight.grad is grad and grad.dtype == np.float64
    assert layer.count.dtype == np.int64 and layer.scale.dtype == np.float64
    assert layer.float().weight.dtype == np.float32 and layer.half().weight.dtype == np.float16
    assert layer.to(ta.ones(1, dtype=ta.float64)).weight.dtype == np.float64
    assert layer.to("cpu", ta.float32).weight.dtype == np.float32
    assert layer.to(dtype=ta.float64, device="cpu", non_blocking=True) is layer
    assert layer.cpu() is layer
    with pytest.raises(TypeError, match="floating point"):
        layer.to(ta.int64)
    layer.type(ta.float64)
    assert layer.count.dtype == np.float64  # type() converts every tensor, as PyTorch
    with pytest.raises(TypeError, match="requires grad"):
        layer.type(ta.int32)
    with pytest.raises(ValueError, match="CPU"):
        layer.to("cuda")


def test_zero_grad_set_to_none_or_zeros_in_place():
    layer = _linear()
    layer(ta.ones(1, 2)).sum().backward()
    grad = layer.weight.grad
    layer.zero_grad(set_to_none=False)
    assert layer.weight.grad is grad and not grad.numpy().any()
    layer.zero_grad()
    assert layer.weight.grad is None and layer.bias.grad is None


# ----------------------------------------------------------------------------------- hooks
def test_forward_hooks_see_and_replace_inputs_and_outputs():
    layer, seen = _linear(), []
    pre = layer.register_forward_pre_hook(lambda m, args: seen.append(("pre", len(args))))
    post = layer.register_forward_hook(lambda m, args, out: seen.append(("post", out.shape)))
    double = layer.register_forward_pre_hook(lambda m, args: args[0] * 2)  # one value: a 1-tuple
    zero = layer.register_forward_hook(lambda m, args, out: out * 0)
    x = ta.ones(1, 2)
    assert not layer(x).numpy().any() and seen == [("pre", 1), ("post", (1, 3))]
    double.remove()
    zero.remove()
    zero.remove()  # twice: nothing happens
    np.testing.assert_allclose(layer(x).numpy(), ta.functional.linear(x, layer.weight, layer.bias))
    with layer.register_forward_hook(lambda m, a, o: seen.append("inside")):
        layer(x)
    layer(x)
    assert seen.count("inside") == 1
    pre.remove()
    post.remove()
    assert layer._hooks_of is None  # all removed: the plain call again

    def with_kwargs(module, args, kwargs):
        return args, {**kwargs}

    layer.register_forward_pre_hook(with_kwargs, with_kwargs=True)
    layer.register_forward_hook(lambda m, a, k, o: o + 1, with_kwargs=True, prepend=True)
    assert layer(x).shape == (1, 3)


def test_full_backward_hook_sees_and_replaces_grad_input():
    layer = _linear()
    seen = []
    handle = layer.register_full_backward_hook(
        lambda m, grad_input, grad_output: seen.append((grad_input, grad_output))
    )
    x = ta.ones(3, 2, requires_grad=True)
    layer(x).sum().backward()
    (grad_input,), (grad_output,) = seen[-1]
    np.testing.assert_array_equal(grad_output.numpy(), np.ones((3, 3)))
    np.testing.assert_allclose(grad_input.numpy(), x.grad.numpy())
    handle.remove()
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 10,))
    plain = x.grad.numpy().copy()
    x.grad = None
    layer(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 10 * plain, rtol=1e-6)
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input, got 2, but expected 1"):
        layer(x).sum().backward()


def test_full_backward_pre_hook_scales_grad_output_and_no_input_grad_warns():
    layer = _linear()
    layer.register_full_backward_pre_hook(lambda m, grad_output: (grad_output[0] * 3,))
    layer(ta.ones(2, 2)).sum().backward()  # no input requires grad
    np.testing.assert_array_equal(layer.bias.grad.numpy(), np.full(3, 6.0))
    seen = []
    layer.register_full_backward_hook(lambda m, gi, go: seen.append(gi))
    with pytest.warns(UserWarning, match="none of its inputs requires grad"):
        layer(ta.ones(2, 2)).sum().backward()
    assert seen == [(None,)]


def test_full_backward_hook_with_two_inputs_and_two_outputs():
    class Two(nn.Module):
        def forward(self, a, b):
            return a * 2, b * 3

    seen = []
    two = Two()
    two.register_full_backward_hook(lambda m, gi, go: seen.append((gi, go)))
    a, b = ta.ones(2, requires_grad=True), ta.ones(3, requires_grad=True)
    first, second = two(a, b)
    (first.sum() + (second * second).sum()).backward()
    grad_input, grad_output = seen[0]
    np.testing.assert_array_equal(grad_output[1].numpy(), np.full(3, 6.0))
    np.testing.assert_array_equal(grad_input[0].numpy(), np.full(2, 2.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.full(3, 18.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with ta.no_grad():
            two(a, b)  # no graph: the hooks are not armed


# ------------------------------------------------------------------------------ containers
def test_sequential_slicing_gives_a_sequential_with_the_same_names():
    ta.manual_seed(0)
    seq = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 1))
    tail = seq[1:]
    assert type(tail) is nn.Sequential and [n for n, _ in tail.named_children()] == ["1", "2"]
    assert list(tail.state_dict()) == ["2.weight", "2.bias"] and tail[1] is seq[2]
    assert seq[2].weight.name == "2.weight"  # the original keeps its names
    assert seq[-1] is seq[2] and len(seq) == 3
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(1, 1)), ("act", nn.ReLU())]))
    assert named[0] is named.fc and [n for n, _ in named[1:].named_children()] == ["act"]
    seq.append(nn.Tanh())
    seq.insert(0, nn.Identity())
    del seq[0]
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear", "Tanh"]
    assert [n for n, _ in seq.named_children()] == ["0", "1", "2", "3"]
    assert len(seq + nn.Sequential(nn.ReLU())) == 5 and len(nn.Sequential(nn.ReLU()) * 3) == 3
    assert isinstance(seq.pop(-1), nn.Tanh) and len(seq) == 3


def test_module_list_slicing_renumbers():
    items = nn.ModuleList([nn.ReLU(), nn.Tanh(), nn.Sigmoid()])
    part = items[::2]
    assert type(part) is nn.ModuleList and [type(m).__name__ for m in part] == ["ReLU", "Sigmoid"]
    assert [n for n, _ in part.named_children()] == ["0", "1"]
    items[1] = nn.Identity()
    items += [nn.ReLU()]
    assert [type(m).__name__ for m in items] == ["ReLU", "Identity", "Sigmoid", "ReLU"]


def test_parameter_list_and_dict():
    plist = nn.ParameterList([nn.Parameter(ta.ones(2)), ta.zeros(3)])
    assert all(isinstance(p, nn.Parameter) for p in plist) and plist[1].requires_grad
    assert [n for n, _ in plist.named_parameters()] == ["0", "1"]
    plist.append(ta.ones(1))
    assert len(plist) == 3 and list(plist.state_dict()) == ["0", "1", "2"]
    assert type(plist[0:2]) is nn.ParameterList and plist[0:2][1] is plist[1]
    assert "(1): Parameter containing: [float32 of size 3]" in repr(plist)
    pdict = nn.ParameterDict({"a": ta.ones(2), "b": nn.Parameter(ta.zeros(1))})
    assert list(pdict) == ["a", "b"] and isinstance(pdict["a"], nn.Parameter)
    pdict["c"] = ta.ones(1)
    assert "c" in pdict and len(pdict) == 3 and pdict.pop("a").shape == (2,)
    assert list(pdict.state_dict()) == ["b", "c"]
    model = nn.Module()
    model.weights = plist
    assert [n for n, _ in model.named_parameters()] == ["weights.0", "weights.1", "weights.2"]


def test_modules_survive_copy_and_pickle_with_their_registrations():
    net = _Net()
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert list(clone.state_dict()) == list(net.state_dict())
        assert isinstance(clone.own, nn.Parameter) and clone.shared is clone.a


def test_nn_functional_is_a_module_import():
    import tinygrad_attn.nn.functional as F  # noqa: N812  (issue 27: PyTorch's spelling)

    assert F.softmax is ta.functional.softmax and F.cross_entropy is ta.nn.functional.cross_entropy
