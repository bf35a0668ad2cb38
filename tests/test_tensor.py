"""Tensor construction, dtype policy, operators, NumPy interop and the errors for bad input."""

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor


def test_python_floats_default_to_float32_and_arrays_keep_dtype():
    assert Tensor(1.5).dtype == np.float32
    assert Tensor([[1.0, 2.0]]).dtype == np.float32
    assert Tensor(np.zeros(3)).dtype == np.float64
    assert Tensor(np.zeros(3, np.float16)).dtype == np.float16
    assert Tensor([1, 2]).dtype.kind == "i"
    assert Tensor([True, False]).dtype == np.bool_
    assert Tensor([1, 2], dtype=np.float64).dtype == np.float64


def test_default_dtype_can_be_changed():
    ta.set_default_dtype(np.float64)
    try:
        assert Tensor([1.0]).dtype == np.float64
        assert ta.zeros(2).dtype == np.float64
    finally:
        ta.set_default_dtype(np.float32)
    with pytest.raises(TypeError, match="float dtype"):
        ta.set_default_dtype(np.int32)


def test_tensor_copies_but_from_numpy_shares():
    a = np.ones(3)
    t = Tensor(a)
    a[0] = 5
    assert t.numpy()[0] == 1
    s = ta.from_numpy(a)
    a[1] = 7
    assert s.numpy()[1] == 7
    assert np.asarray(s) is a and s.numpy() is a


def test_integer_and_bool_tensors_cannot_require_grad():
    with pytest.raises(TypeError, match="only float tensors can require grad.*int"):
        Tensor([1, 2], requires_grad=True)
    with pytest.raises(TypeError, match="bool"):
        Tensor([True]).requires_grad_()


def test_non_numeric_data_is_a_type_error():
    with pytest.raises(TypeError, match="not numeric"):
        Tensor(["a", "b"])
    with pytest.raises(TypeError, match="rectangular"):
        Tensor([[1.0, 2.0], [3.0]])


def test_properties_and_len():
    t = Tensor(np.arange(6.0).reshape(2, 3))
    assert t.shape == (2, 3) and t.ndim == 2 and t.size == 6 and len(t) == 2
    assert t.T.shape == (3, 2)
    assert Tensor(3.0).item() == 3.0


def test_item_of_many_elements_explains():
    with pytest.raises(ValueError, match=r"item\(\).*shape \(2,\)"):
        Tensor([1.0, 2.0]).item()


def test_operators_with_numbers_and_arrays_on_either_side():
    x = Tensor([1.0, 2.0], requires_grad=True)
    out = 2 - x + x * 3 / 2 + np.array([1.0, 1.0], np.float32) - 1 / x + x**2 + 2**x
    expected = 2 - x.numpy() + x.numpy() * 1.5 + 1 - 1 / x.numpy() + x.numpy() ** 2 + 2 ** x.numpy()
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    assert out.dtype == np.float32  # Python scalars do not promote float32
    out.sum().backward()
    g = -1 + 1.5 + 1 / x.numpy() ** 2 + 2 * x.numpy() + np.log(2) * 2 ** x.numpy()
    np.testing.assert_allclose(x.grad, g, rtol=1e-5)
    r = np.ones(2, np.float32) * x  # ndarray on the left still makes a Tensor
    assert isinstance(r, Tensor) and r.grad_fn is not None


def test_comparisons_give_bool_tensors_without_grad():
    x = Tensor([1.0, 2.0, 3.0], requires_grad=True)
    m = x > 1.5
    assert m.dtype == np.bool_ and not m.requires_grad and m.grad_fn is None
    np.testing.assert_array_equal((x == 2.0).numpy(), [False, True, False])
    np.testing.assert_array_equal((x <= 2.0).numpy(), [True, True, False])


def test_float32_stays_float32_through_forward_and_backward():
    x = Tensor(np.ones((2, 3), np.float32), requires_grad=True)
    w = Tensor(np.ones((3, 4), np.float32), requires_grad=True)
    y = (x @ w).softmax(-1).log().sum()
    assert y.dtype == np.float32
    y.backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32


def test_mixed_precision_promotes_like_numpy_and_grads_keep_input_dtype():
    a = Tensor(np.ones(3, np.float32), requires_grad=True)
    b = Tensor(np.ones(3, np.float64), requires_grad=True)
    c = a * b
    assert c.dtype == np.result_type(np.float32, np.float64)
    c.sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64


def test_detach_and_requires_grad_():
    x = Tensor([1.0], requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf
    with pytest.raises(RuntimeError, match="detach"):
        (x * 2).requires_grad_(False)


def test_non_leaf_grad_read_warns_and_names_retain_grad():
    x = Tensor([1.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match="retain_grad"):
        assert y.grad is None


def test_repr_is_readable():
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    assert repr(x) == "tensor([1., 2.], requires_grad=True, name='x')"
    assert "grad_fn=<Mul>" in repr(x * 2)


def test_broadcast_mismatch_names_op_and_shapes():
    with pytest.raises(ValueError, match=r"Add: shapes \(2, 3\) and \(4,\) do not broadcast"):
        Tensor(np.ones((2, 3))) + Tensor(np.ones(4))


def test_matmul_mismatch_names_shapes_and_fix():
    with pytest.raises(
        ValueError, match=r"MatMul: cannot multiply shapes \(2, 3\) @ \(4, 5\).*transpose"
    ):
        Tensor(np.ones((2, 3))) @ Tensor(np.ones((4, 5)))


def test_backward_errors():
    x = Tensor(np.ones((2, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match=r"one-element output.*\(2, 2\).*gradient="):
        (x * 2).backward()
    with pytest.raises(
        RuntimeError, match=r"gradient has shape \(3,\) but the output has shape \(2, 2\)"
    ):
        (x * 2).backward(np.ones(3))
    with pytest.raises(RuntimeError, match="does not require grad.*requires_grad=True"):
        Tensor([1.0]).sum().backward()


def test_softmax_over_missing_axis():
    with pytest.raises(
        ValueError, match=r"Softmax: axis 2 does not exist for a tensor of shape \(2, 3\)"
    ):
        Tensor(np.ones((2, 3))).softmax(axis=2)


def test_getitem_repeated_indices_accumulate():
    x = Tensor(np.arange(4.0), requires_grad=True)
    x[np.array([0, 0, 3])].sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 0.0, 0.0, 1.0])


def test_constructors_and_seed():
    ta.manual_seed(3)
    a = ta.randn(2, 3)
    ta.manual_seed(3)
    b = ta.randn((2, 3))
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert ta.zeros(2, 3).shape == (2, 3) and ta.ones(4, requires_grad=True).requires_grad
    assert ta.arange(5).dtype.kind == "i"
    s = ta.stack([Tensor([1.0]), Tensor([2.0])], axis=0)
    assert s.shape == (2, 1)
    w = ta.where(Tensor([True, False]), Tensor([1.0, 2.0]), 0.0)
    np.testing.assert_array_equal(w.numpy(), [1.0, 0.0])


def test_roll_by_a_shift_beyond_the_dims_size_and_beyond_int64():
    """A shift is taken modulo the size (forward and backward, 2**40 as PyTorch); one that does
    not fit in int64 is PyTorch's ValueError, with the fix, not a crash inside."""
    x = ta.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.roll(2**40)  # 2**40 % 3 == 1
    assert y.tolist() == [3.0, 1.0, 2.0]
    (y * ta.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [2.0, 3.0, 1.0]
    with pytest.raises(ValueError, match="does not fit in int64"):
        x.roll(2**65)
