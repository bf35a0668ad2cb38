"""Changing a tensor after it was made: in-place ops, `.data` assignment, pickling.

Issue 13, items 2 (in-place ops on leaves), 4 (`.data` validated) and 17 (pickling). PyTorch
semantics: under `no_grad`, `+= -= *= /=` and `add_ sub_ mul_ div_ zero_ fill_ copy_` change the
same leaf's data; outside it, an in-place op on a leaf that requires grad is a RuntimeError.
Values marked "torch" were computed with torch 2.13 (float64).
"""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from _intact import assert_intact

import tinygrad_attn as ta
import tinygrad_attn.nn as nn
from tinygrad_attn import Tensor, no_grad


@pytest.fixture
def rng():
    return np.random.default_rng(13)


# ------------------------------------------------------------------ item 2: in-place on leaves
def test_module_parameter_updated_in_place_under_no_grad():
    ta.manual_seed(0)
    m = nn.Linear(3, 2)
    weight = m.weight
    before = weight.numpy().copy()
    with no_grad():
        m.weight -= 0.1
        m.bias *= 2.0
    assert m.weight is weight  # the same leaf: parameters() and state_dict() still hold it
    assert any(p is weight for p in m.parameters())
    np.testing.assert_array_equal(m.state_dict()["weight"], before - np.float32(0.1))
    assert weight.requires_grad and weight.is_leaf and weight.name == "weight"
    assert_intact()


def test_manual_sgd_idiom_matches_torch():
    x = Tensor(np.arange(6.0).reshape(3, 2) / 4)
    y = Tensor([[1.0], [-1.0], [0.5]], dtype=np.float64)
    w = Tensor([[0.3], [-0.2]], dtype=np.float64, requires_grad=True)
    leaf = w
    for _ in range(3):
        loss = ((x @ w - y) ** 2).sum()
        loss.backward()
        with no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    assert w is leaf and w.requires_grad
    torch_w = np.array([[0.26454531249999996], [-0.16271640625]])  # torch
    np.testing.assert_allclose(w.numpy(), torch_w, rtol=1e-14)


def test_inplace_methods_update_the_same_leaf_and_return_it():
    w = Tensor([1.0, 2.0, 3.0], dtype=np.float64, requires_grad=True)
    array = w.numpy()
    g = np.array([1.0, 1.0, 2.0])
    with no_grad():
        assert w.add_(g, alpha=-0.5) is w
        np.testing.assert_array_equal(w.numpy(), [0.5, 1.5, 2.0])
        assert w.sub_(Tensor([0.5, 0.5, 0.5], dtype=np.float64)) is w
        assert w.mul_(4) is w
        assert w.div_(2.0) is w
        np.testing.assert_array_equal(w.numpy(), [0.0, 2.0, 3.0])
        assert w.sub_(1.0, alpha=2) is w
        np.testing.assert_array_equal(w.numpy(), [-2.0, 0.0, 1.0])
        assert w.copy_(np.array([7, 8, 9])) is w  # converted to the tensor's dtype
        assert w.dtype == np.float64
        np.testing.assert_array_equal(w.numpy(), [7.0, 8.0, 9.0])
        assert w.copy_(Tensor(5.0)) is w  # broadcasts, like torch's copy_
        np.testing.assert_array_equal(w.numpy(), [5.0, 5.0, 5.0])
        assert w.fill_(-1.5) is w
        np.testing.assert_array_equal(w.numpy(), [-1.5, -1.5, -1.5])
        assert w.zero_() is w
        np.testing.assert_array_equal(w.numpy(), [0.0, 0.0, 0.0])
        w += 1
        w /= 4
    np.testing.assert_array_equal(w.numpy(), [0.25, 0.25, 0.25])
    assert w.numpy() is array  # written in place: a view or `from_numpy` user sees the change
    assert w.requires_grad and w.is_leaf and w.grad is None


def test_inplace_on_a_leaf_that_requires_grad_outside_no_grad_is_an_error():
    w = Tensor([1.0, 2.0], requires_grad=True, name="w")
    for update in (
        lambda: w.__isub__(1.0),
        lambda: w.add_(1.0),
        lambda: w.mul_(2.0),
        lambda: w.zero_(),
        lambda: w.fill_(3.0),
        lambda: w.copy_(np.zeros(2)),
    ):
        with pytest.raises(RuntimeError, match=r"in-place .* leaf 'w'.*requires grad.*no_grad"):
            update()
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    with pytest.raises(RuntimeError, match="in-place"):
        w -= 1.0
    assert w.grad_fn is None
    assert_intact()


def test_inplace_operator_on_a_non_leaf_is_recorded_on_the_same_tensor():
    """PyTorch: `c += d` on a tensor of a graph writes into c and records the change; c is the
    same object, now made by the in-place node."""
    a = Tensor([1.0, 2.0], dtype=np.float64, requires_grad=True)
    d = Tensor([3.0, 4.0], dtype=np.float64, requires_grad=True)
    c = a * 2
    same, memory = c, c.numpy()
    c += d
    c *= a
    assert c is same and c.numpy() is memory
    assert c.grad_fn.name == "Mul" and c.grad_fn.inplace == "mul_()"
    c.sum().backward()
    np.testing.assert_array_equal(a.grad, 4 * a.numpy() + d.numpy())  # d(2a^2 + a d)/da
    np.testing.assert_array_equal(d.grad, a.numpy())
    c2 = a * 2
    c2.add_(1.0)
    assert c2.grad_fn.name == "Add" and c2.grad_fn.inplace == "add_()"


def test_inplace_on_a_plain_leaf():
    x = Tensor([1.0, 2.0])
    same = x
    x += 1  # no graph involved: in place, like torch
    x.mul_(3)
    assert x is same
    np.testing.assert_array_equal(x.numpy(), [6.0, 9.0])
    w = Tensor([1.0, 1.0], requires_grad=True)
    x += w  # a value that requires grad: recorded, x becomes a tensor of the graph
    assert x is same and x.grad_fn.name == "Add" and not x.is_leaf
    x.mul_(w)
    x.sum().backward()
    np.testing.assert_array_equal(w.grad, [8.0, 11.0])  # d(sum((x0 + w) * w))/dw = x0 + 2w
    np.testing.assert_array_equal(same.numpy(), [7.0, 10.0])


def test_inplace_on_an_op_result_writes_its_memory_and_its_views_see_it():
    w = Tensor([0.0, 1.0], dtype=np.float64, requires_grad=True)
    y = w.exp()
    z = y.detach()  # shares y's memory (and its version)
    z.zero_()
    np.testing.assert_array_equal(y.numpy(), [0.0, 0.0])  # written through, as in PyTorch
    with pytest.raises(RuntimeError, match="Exp saved its output.*modified by an inplace"):
        y.sum().backward()  # Exp saved the values it made, which are gone
    with no_grad():
        m = w * 2
        m.fill_(5.0)
        m -= 1
    np.testing.assert_array_equal(m.numpy(), [4.0, 4.0])


def test_inplace_on_a_leaf_a_live_graph_saved_is_refused_at_backward():
    w = Tensor([1.0, 2.0], dtype=np.float64, requires_grad=True)
    loss = (w * w).sum()  # Mul saved w
    with no_grad():
        w -= 1.0  # written (PyTorch writes too), the version goes up
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0])
    with pytest.raises(RuntimeError, match=r"Mul saved its input 0.*modified by an inplace"):
        loss.backward()
    assert w.grad is None
    loss = (w * w).sum()  # a forward after the change: fine
    loss.backward()
    np.testing.assert_array_equal(w.grad, [0.0, 2.0])
    assert_intact()


def test_item_assignment_writes_in_place_so_views_never_part_ways():
    w = Tensor([1.0, 2.0, 3.0], dtype=np.float64, requires_grad=True)
    view = w.detach()[:2]  # shares w's memory
    with no_grad():
        w[0] = 5.0
    np.testing.assert_array_equal(view.numpy(), [5.0, 2.0])
    result = w * 1.0
    with no_grad():
        result[1] = 0.0  # an op's result is written in place too
    np.testing.assert_array_equal(result.numpy(), [5.0, 0.0, 3.0])
    assert_intact()


def test_inplace_shape_and_dtype_errors():
    x = Tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match=r"add_\(\).*\(2, 3\).*\(3,\)"):
        x.add_(np.ones((2, 3)))  # would enlarge x
    with pytest.raises(ValueError, match=r"copy_\(\)|broadcast"):
        x.copy_(np.ones(2))
    n = Tensor([1, 2])
    with pytest.raises(RuntimeError, match=r"div_\(\).*float32.*int64"):
        n /= 2  # PyTorch: result type Float can't be cast to the desired output type Long
    with pytest.raises(TypeError, match=r"add_\(\).*complex"):
        x += np.array([1j, 1j, 1j])
    with pytest.raises(TypeError, match=r"fill_\(\).*str"):
        x.fill_("1")
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(n.numpy(), [1, 2])
    n += 1  # integer arithmetic that stays integer is fine
    np.testing.assert_array_equal(n.numpy(), [2, 3])
    assert_intact()


# ---------------------------------------------------------------------- item 4: `.data = ...`
def test_data_assignment_converts_to_the_dtype_of_a_tensor_that_requires_grad():
    w = Tensor([0.5, 0.5, 0.5], requires_grad=True)
    w.data = np.array([1, 2, 3])  # ints: converted, the grads stay float32
    assert w.dtype == np.float32
    w.data = [4.0, 5.0, 6.0]  # a list is converted too
    assert isinstance(w.numpy(), np.ndarray) and w.dtype == np.float32
    w.data = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    (w * w).sum().backward()
    assert w.grad.dtype == np.float32
    np.testing.assert_array_equal(w.grad, [2.0, 4.0, 6.0])
    w.data = w.numpy().astype(np.float64)  # a float dtype change, as torch's `.data = x.double()`
    assert w.dtype == np.float64 and w.grad.dtype == np.float64  # .grad follows
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad, [4.0, 8.0, 12.0])


def test_data_assignment_shares_an_array_of_the_right_dtype():
    w = Tensor([0.0, 0.0], dtype=np.float64, requires_grad=True)
    array = np.array([1.0, 2.0])
    w.data = array
    assert w.numpy() is array  # like torch's `.data =` and numpy: no copy
    w.data = Tensor([3.0, 4.0], dtype=np.float64)
    np.testing.assert_array_equal(w.numpy(), [3.0, 4.0])


def test_data_assignment_keeps_grad_in_step():
    w = Tensor([1.0, 2.0], requires_grad=True, name="w")
    w.data = np.ones(3, dtype=np.float32)  # no .grad yet: a new shape is allowed, as torch
    (w * 2).sum().backward()
    assert w.grad.shape == (3,)
    with pytest.raises(ValueError, match=r"'w'.*shape \(2, 2\).*\.grad.*\(3,\).*grad = None"):
        w.data = np.ones((2, 2), dtype=np.float32)
    assert w.shape == (3,)
    w.grad = None
    w.data = np.ones((2, 2), dtype=np.float32)
    assert w.shape == (2, 2)
    assert_intact()


def test_data_assignment_rejects_what_is_not_numeric():
    w = Tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=r"\.data.*dtype <U1"):
        w.data = np.array(["a", "b"])
    with pytest.raises(TypeError, match=r"\.data.*NoneType"):
        w.data = None
    with pytest.raises(TypeError, match=r"\.data.*complex128"):
        w.data = np.array([1j, 2j])
    with pytest.raises(TypeError, match=r"\.data.*ragged|\.data.*rectangular"):
        w.data = [[1.0], [2.0, 3.0]]
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])


def test_data_assignment_on_a_plain_or_non_leaf_tensor():
    x = Tensor([1, 2])  # no grad: the new array's dtype is taken
    x.data = np.array([0.5, 1.5])
    assert x.dtype == np.float64
    a = Tensor([1.0, 2.0], requires_grad=True)
    y = a * 2
    y.data = np.array([5, 6])  # same shape: converted to the node's dtype
    assert y.dtype == np.float32
    with pytest.raises(ValueError, match=r"non-leaf.*made by Mul.*\(2,\)"):
        y.data = np.ones(3, dtype=np.float32)
    y.sum().backward()
    np.testing.assert_array_equal(a.grad, [2.0, 2.0])


# --------------------------------------------------------------------------- item 17: pickle
def test_pickled_leaf_keeps_data_grad_name_and_trains():
    w = Tensor(np.arange(300.0).reshape(30, 10), requires_grad=True, name="w")  # > 1 KiB
    (w * w).sum().backward()
    back = pickle.loads(pickle.dumps(w))
    assert back.requires_grad and back.is_leaf and back.name == "w"
    np.testing.assert_array_equal(back.numpy(), w.numpy())
    np.testing.assert_array_equal(back.grad, w.grad)
    assert back.numpy().flags.writeable and back.grad.numpy().flags.writeable
    (back * 3).sum().backward()  # locks and unlocks the unpickled array; grad accumulates
    np.testing.assert_array_equal(back.grad, 2 * w.numpy() + 3)
    with no_grad():
        back -= 0.1 * back.grad
    x = pickle.loads(pickle.dumps(Tensor([1, 2])))
    assert x.dtype == np.int64 and not x.requires_grad


def test_pickled_tensor_with_a_graph_becomes_a_leaf_with_its_data():
    a = Tensor(np.ones((20, 20)), requires_grad=True)
    y = a * 2  # a live graph: weakrefs inside
    back = pickle.loads(pickle.dumps(y))
    assert back.is_leaf and back.requires_grad  # as torch
    np.testing.assert_array_equal(back.numpy(), y.numpy())
    back.sum().backward()
    np.testing.assert_array_equal(back.grad, np.ones((20, 20)))
    y.sum().backward()  # the original graph is untouched
    np.testing.assert_array_equal(a.grad, np.full((20, 20), 2.0))


def test_pickling_drops_hooks_with_a_warning():
    w = Tensor([1.0], requires_grad=True)
    w.register_hook(lambda g: g * 2)
    with pytest.warns(UserWarning, match="hook.*not pickled"):
        back = pickle.loads(pickle.dumps(w))
    back.sum().backward()
    np.testing.assert_array_equal(back.grad, [1.0])


def test_pickled_linear_round_trip_then_trains():
    ta.manual_seed(1)
    m = nn.Linear(16, 16)
    x = Tensor(np.linspace(-1, 1, 64).reshape(4, 16).astype(np.float32))
    expected = m(x).numpy().copy()
    for back in (pickle.loads(pickle.dumps(m)), copy.deepcopy(m)):
        np.testing.assert_array_equal(back(x).numpy(), expected)
        assert [n for n, _ in back.named_parameters()] == ["weight", "bias"]
        assert back.weight.name == "weight"
        loss = (back(x) ** 2).mean()
        loss.backward()
        before = back.weight.numpy().copy()
        with no_grad():
            for p in back.parameters():
                p -= 0.1 * p.grad
        assert not np.array_equal(back.weight.numpy(), before)
        np.testing.assert_array_equal(m.weight.numpy(), m.state_dict()["weight"])  # original kept


def test_pickled_attention_module_after_forward():
    ta.manual_seed(2)
    attn = nn.SelfAttention(8)
    x = ta.randn(5, 8)
    attn(x)  # keeps .attn_weights, a non-leaf with a live graph
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = pickle.loads(pickle.dumps(attn))
    np.testing.assert_array_equal(back.attn_weights.numpy(), attn.attn_weights.numpy())
    out = back(x)
    out.sum().backward()
    assert back.query.weight.grad.shape == (8, 8)
    assert_intact()


def test_power_and_matmul_assignments_never_rebind_a_leaf():
    w = Tensor([1.0, 2.0], dtype=np.float64, requires_grad=True)
    leaf = w
    with no_grad():
        w **= 2
        w @= np.array([[0.0, 1.0], [1.0, 0.0]])  # in place, as PyTorch
    assert w is leaf
    np.testing.assert_array_equal(w.numpy(), [4.0, 1.0])
    with pytest.raises(RuntimeError, match="in-place"):
        w **= 2
    with pytest.raises(RuntimeError, match=r"@=.*shape \(3,\)"), no_grad():
        w @= np.ones((2, 3))  # the product would not fit w
    c = w * 1
    c @= np.eye(2)  # a non-leaf: recorded, as for +=
    assert c.grad_fn.inplace == "@="
    c.sum().backward()
    np.testing.assert_array_equal(w.grad, [1.0, 1.0])


def test_the_in_place_forms_of_functions_write_into_the_same_array():
    """relu_, clamp_, masked_fill_, exp_, tanh_, sigmoid_, neg_ (PyTorch's spellings) change a
    plain tensor, or a leaf under no_grad, in place: the same object and the same array."""
    source = np.array([-2.0, -0.5, 0.0, 0.5, 3.0])
    x = ta.from_numpy(source)  # a from_numpy user sees the change, as in PyTorch
    assert x.relu_() is x and x.numpy() is source
    np.testing.assert_array_equal(source, [0.0, 0.0, 0.0, 0.5, 3.0])
    assert x.clamp_(max=1.0) is x
    np.testing.assert_array_equal(source, [0.0, 0.0, 0.0, 0.5, 1.0])
    assert x.masked_fill_(np.array([True, False, False, False, False]), -1.0) is x
    np.testing.assert_array_equal(source, [-1.0, 0.0, 0.0, 0.5, 1.0])
    assert x.neg_() is x
    np.testing.assert_array_equal(source, [1.0, -0.0, -0.0, -0.5, -1.0])
    expected = np.tanh(np.exp(source.copy()))
    assert x.exp_().tanh_() is x
    np.testing.assert_allclose(source, expected, rtol=1e-15)
    assert x.sigmoid_() is x
    np.testing.assert_allclose(source, 1 / (1 + np.exp(-expected)), rtol=1e-15)
    w = Tensor([-1.0, 2.0], requires_grad=True)
    with no_grad():
        assert w.clamp_(0.0, 1.0) is w
    np.testing.assert_array_equal(w.numpy(), [0.0, 1.0])


def test_the_in_place_forms_of_functions_record_or_refuse_as_pytorch():
    w = Tensor([-1.0, 2.0], requires_grad=True)
    y = w * 2
    y.relu_()  # a tensor of a graph: recorded
    assert y.grad_fn.name == "Relu" and y.grad_fn.inplace == "relu_()"
    y.masked_fill_(np.array([True, False]), 0.5)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad, [0.0, 2.0])
    with pytest.raises(RuntimeError, match=r"sigmoid_\(\): in-place change of the leaf.*grad"):
        w.sigmoid_()
    plain = Tensor([1.0, 2.0])
    plain.masked_fill_(np.array([True, False]), w[0])  # the value requires grad: recorded
    assert plain.grad_fn.name == "MaskedFill" and not plain.is_leaf
    with pytest.raises(RuntimeError, match=r"exp_\(\): the result type float32.*int64"):
        Tensor(np.array([1, 2])).exp_()
    np.testing.assert_array_equal(w.numpy(), [-1.0, 2.0])
    np.testing.assert_array_equal(plain.numpy(), [-1.0, 2.0])


@pytest.mark.parametrize(
    "name", ["selu", "celu", "mish", "relu6", "hardsigmoid", "hardswish", "threshold", "elu"]
)
def test_an_activation_of_several_ops_in_place_keeps_its_gradient(name):
    """`F.selu(h, inplace=True)` computes with several ops (scale * elu(h)); each that saved h's
    memory gets its own copy before the write, so backward is the out-of-place gradient (it
    was a 'modified by an inplace operation' error for the ops before the last)."""
    from tinygrad_attn.nn import functional as F

    fn = getattr(F, name)
    call = (lambda t, inplace: fn(t, 0.1, -1.0, inplace)) if name == "threshold" else fn
    x = Tensor([-4.0, -1.0, 0.5, 4.0], dtype=np.float64, requires_grad=True)
    h = x * 1.0
    assert call(h, inplace=True) is h
    (h * Tensor([1.0, 2.0, 3.0, 4.0], dtype=np.float64)).sum().backward()
    in_place = x.grad.numpy().copy()
    x.grad = None
    (call(x * 1.0, inplace=False) * Tensor([1.0, 2.0, 3.0, 4.0], dtype=np.float64)).sum().backward()
    np.testing.assert_array_equal(in_place, x.grad.numpy())
