"""Exact under misuse: the ordinary wrong thing gives PyTorch's value or a clear error.

Issue 13, items 5-11, 19 and the raw-error part of 20 that concerns ops. Values marked "torch"
were computed with torch 2.13 (float64 unless said); every error is followed by a check that
the framework is intact (`assert_intact`: a fresh forward and backward give torch's values).
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from _intact import assert_intact

import tinygrad_attn as ta
import tinygrad_attn.functional as F
import tinygrad_attn.nn as nn
from tinygrad_attn import Tensor


def f64(values, requires_grad=True):
    return Tensor(np.asarray(values, dtype=np.float64), requires_grad=requires_grad)


# ------------------------------------------------------------- item 5: powers at a zero base
def test_pow_with_exponent_zero_has_zero_gradient_at_zero():
    for exponent in (0, 0.0, f64(0.0, requires_grad=False)):
        x = f64([0.0, 1.0, 2.0])
        (x**exponent).sum().backward()
        np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0])  # torch


def test_pow_exponent_gradient_at_a_zero_base_is_masked_like_torch():
    t = f64([0.0, 1.0, 2.0])
    (f64(0.0, requires_grad=False) ** t).sum().backward()
    np.testing.assert_array_equal(t.grad, [0.0, 0.0, 0.0])  # torch
    base, t = f64([0.0, 2.0, 3.0]), f64([0.0, 1.0, 2.0])
    (base**t).sum().backward()
    np.testing.assert_allclose(t.grad, [0.0, 2 * math.log(2), 9 * math.log(3)], rtol=1e-15)
    np.testing.assert_array_equal(base.grad, [0.0, 1.0, 6.0])  # torch
    # where torch keeps inf / nan, so do we: 0 ** -1 and a negative base
    base, t = f64([-2.0, 0.0, 0.0]), f64([2.0, 0.5, -1.0])
    with np.errstate(divide="ignore"):  # NumPy's own warning for 0 ** -1 in forward
        out = base**t
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and none from the backward formulas
        out.sum().backward()
    np.testing.assert_array_equal(out.numpy(), [4.0, 0.0, np.inf])  # torch
    np.testing.assert_array_equal(base.grad, [-4.0, np.inf, -np.inf])  # torch
    np.testing.assert_array_equal(t.grad, [np.nan, 0.0, -np.inf])  # torch


def test_pow_still_gradchecks_away_from_zero():
    rng = np.random.default_rng(5)
    base = f64(rng.uniform(0.5, 2.0, (3, 2)))
    exponent = f64(rng.uniform(-1.5, 1.5, (2,)))
    assert ta.gradcheck(lambda a, b: a**b, (base, exponent))


# ------------------------------------------- item 6: composed attention, fully -inf mask row
@pytest.mark.parametrize("fn", ["attention_composed", "attention_weights"])
def test_composed_attention_with_a_fully_minus_inf_float_row_matches_the_fused_op(fn):
    rng = np.random.default_rng(6)
    q, k, v = (f64(rng.standard_normal(shape)) for shape in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    mask_values = rng.standard_normal((3, 5))
    mask_values[1] = -np.inf  # every key masked for query 1
    mask_values[2, :2] = -np.inf
    mask = f64(mask_values)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fused = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        if fn == "attention_weights":
            out = F.attention_weights(q, k, attn_mask=mask) @ v
        else:
            out = F.attention_composed(q, k, v, attn_mask=mask)
    assert np.isfinite(out.numpy()).all()
    np.testing.assert_array_equal(out.numpy()[:, 1], 0.0)
    np.testing.assert_allclose(out.numpy(), fused.numpy(), rtol=1e-12, atol=1e-15)
    weights = rng.standard_normal(out.shape)
    grads = []
    for result in (fused, out):
        for t in (q, k, v, mask):
            t.grad = None
        (result * weights).sum().backward()
        grads.append([t.grad.numpy().copy() for t in (q, k, v, mask)])
    for fused_grad, composed_grad in zip(*grads):
        assert np.isfinite(composed_grad).all()
        np.testing.assert_allclose(composed_grad, fused_grad, rtol=1e-11, atol=1e-14)


# --------------------------------------------- item 7: masked_fill with a Tensor value
def test_masked_fill_tensor_value_gets_its_gradient():
    a = f64(np.ones((2, 3)))
    value = f64(5.0)
    mask = np.array([[True, False, True], [False, False, True]])
    out = a.masked_fill(mask, value)
    np.testing.assert_array_equal(out.numpy(), [[5.0, 1.0, 5.0], [1.0, 1.0, 5.0]])
    (out * np.arange(6.0).reshape(2, 3)).sum().backward()
    np.testing.assert_array_equal(a.grad, [[0.0, 1.0, 0.0], [3.0, 4.0, 0.0]])  # torch
    np.testing.assert_array_equal(value.grad, 7.0)  # torch
    assert ta.gradcheck(lambda x, v: x.masked_fill(mask, v), (f64(np.ones((2, 3))), f64(2.0)))
    with pytest.raises(ValueError, match=r"MaskedFill: the value.*shape \(3,\).*0-d.*ta.where"):
        a.masked_fill(mask, f64(np.ones(3)))
    assert_intact()


# ------------------------------------------------------------- item 8: integer tensors
def test_float_functions_of_integer_tensors_give_the_default_float_dtype():
    ints = Tensor([1, 2])
    expected = {  # torch, float32
        "erf": [0.8427008, 0.9953223],
        "sigmoid": [0.7310586, 0.880797],
        "exp": np.exp([1.0, 2.0]),
        "log": np.log([1.0, 2.0]),
        "sqrt": np.sqrt([1.0, 2.0]),
        "tanh": np.tanh([1.0, 2.0]),
        "softmax": [0.26894143, 0.7310586],
        "log_softmax": [-1.3132616, -0.31326166],
    }
    for name, values in expected.items():
        out = getattr(ints, name)(*((-1,) if "softmax" in name else ()))
        assert out.dtype == np.float32, name
        np.testing.assert_allclose(out.numpy(), values, rtol=1e-6, err_msg=name)
    for fn in (F.softmax, F.log_softmax):
        assert fn(Tensor([[1, 2]]), axis=-1).dtype == np.float32
    assert Tensor([1, 2], dtype=np.int8).exp().dtype == np.float32  # not NumPy's float16
    for out in (ints.float().mean(), ints / Tensor([2, 4]), ints / 2):  # not float64
        assert out.dtype == np.float32
    for reduce in (ints.mean, ints.var, ints.std):  # PyTorch: floating point only
        with pytest.raises(RuntimeError, match="floating point"):
            reduce()
    assert Tensor([1, -2]).relu().dtype == np.int64  # as torch: relu keeps integers
    assert Tensor([True, False]).sigmoid().dtype == np.float32


def test_dropout_of_an_integer_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"dropout: .*float tensor.*int64"):
        F.dropout(Tensor([1, 2]), 0.5)
    assert_intact()


# --------------------------------------------------------- item 9: complex and object data
@pytest.mark.parametrize(
    "other",
    [np.array([1j]), np.array([1.0], dtype=object), 1 + 2j, np.complex128(1j), np.array(["a"])],
)
def test_complex_and_object_operands_are_type_errors(other):
    x = Tensor([1.0, 2.0], requires_grad=True)
    for combine in (
        lambda: x * other,
        lambda: other * x,
        lambda: x + other,
        lambda: x @ other,
        lambda: ta.where(np.array([True, False]), x, other),
    ):
        with pytest.raises(TypeError, match=r"(complex|object|<U1).*(float|real)"):
            combine()
    assert_intact()


def test_custom_op_with_a_complex_input_is_a_type_error():
    class Double(ta.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad_out):
            return (grad_out * 2,)

    with pytest.raises(TypeError, match="complex128"):
        Double.apply(np.array([1j]))


# ------------------------------------------------------ item 10: the constant cache, -0.0
def test_constant_cache_tells_zero_from_minus_zero_and_keeps_nan():
    x = Tensor([2.0, 3.0])
    assert not np.signbit((x * 0.0).numpy()).any()
    with np.errstate(divide="ignore"):
        out = 1 / (x * -0.0)
    np.testing.assert_array_equal(out.numpy(), [-np.inf, -np.inf])  # numpy and torch
    assert np.signbit((Tensor([-0.0]) + -0.0).numpy()).all()
    assert not np.signbit((Tensor([-0.0]) + 0.0).numpy()).any()
    for nan in (math.nan, float("nan"), -math.nan):
        assert np.isnan((x * nan).numpy()).all()
    assert (x * 1).dtype == (x * 1.0).dtype == (x * True).dtype == np.float32


# ------------------------------------------------------ item 11: mse_loss with no target
@pytest.mark.parametrize("target", [None, "1.0", [None, 1.0], object()])
def test_mse_loss_with_a_target_that_is_not_numbers_is_a_type_error(target):
    for pred in (Tensor(1.5, requires_grad=True), Tensor([1.5, 2.0], requires_grad=True)):
        with pytest.raises(TypeError, match="mse_loss: target"):
            F.mse_loss(pred, target)
    assert_intact()


def test_float_dtype_does_not_turn_none_into_nan():
    for data in (None, [None, 1.0], np.array([None, 1.0]), ["1.5"]):
        with pytest.raises(TypeError, match="Tensor: .*(NoneType|object|<U3|list)"):
            Tensor(data, dtype=np.float32)


# --------------------------------------------------------- item 19: empty and 0-d inputs
def test_softmax_of_a_0d_tensor():
    for axis in (0, -1):
        x = Tensor(3.0, requires_grad=True)
        y = x.softmax(axis)
        assert y.shape == () and y.item() == 1.0  # torch
        y.backward()
        assert x.grad == 0.0  # torch
        x.grad = None
        y = F.log_softmax(x, axis)
        assert y.item() == 0.0
        y.backward()
        assert x.grad == 0.0
    with pytest.raises(ValueError, match="Softmax: axis 1"):
        Tensor(3.0).softmax(1)


def test_softmax_over_a_zero_length_axis():
    x = Tensor(np.zeros((2, 0)), requires_grad=True)
    for fn in (F.softmax, F.log_softmax):
        for axis in (0, -1):
            y = fn(x, axis=axis)
            assert y.shape == (2, 0)
            y.sum().backward()
            assert x.grad.shape == (2, 0)


def test_attention_with_no_keys_or_no_queries():
    rng = np.random.default_rng(19)
    q = f64(rng.standard_normal((2, 3, 4)))
    k, v = f64(np.zeros((2, 0, 4))), f64(np.zeros((2, 0, 5)))
    for fn in (F.scaled_dot_product_attention, F.attention_composed):
        out = fn(q, k, v)
        np.testing.assert_array_equal(out.numpy(), np.zeros((2, 3, 5)))  # torch
        out.sum().backward()
        np.testing.assert_array_equal(q.grad, np.zeros((2, 3, 4)))
        q.grad = None
    empty_q = f64(np.zeros((2, 0, 4)))
    k, v = f64(rng.standard_normal((2, 3, 4))), f64(rng.standard_normal((2, 3, 5)))
    assert F.scaled_dot_product_attention(empty_q, k, v, is_causal=True).shape == (2, 0, 5)


def test_transformer_block_with_no_positions():
    ta.manual_seed(3)
    block = nn.TransformerBlock(8, 2)
    x = Tensor(np.zeros((2, 0, 8), dtype=np.float32), requires_grad=True)
    out = block(x)
    assert out.shape == (2, 0, 8)
    out.sum().backward()
    assert x.grad.shape == (2, 0, 8)


def test_matmul_with_an_empty_inner_axis():
    a, b = f64(np.zeros((2, 3, 0))), f64(np.zeros((0, 4)))
    out = a @ b
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 3, 4)))  # numpy and torch
    out.sum().backward()
    assert a.grad.shape == (2, 3, 0) and b.grad.shape == (0, 4)
    rows = f64(np.zeros((0, 3)))
    out = rows @ f64(np.ones((3, 2)))
    assert out.shape == (0, 2)
    out.sum().backward()


def test_concatenate_of_0d_tensors_is_an_error_naming_the_op():
    with pytest.raises(ValueError, match=r"Concatenate: tensor 0 is 0-d.*ta.stack"):
        ta.concatenate([Tensor(1.0), Tensor(2.0)])
    np.testing.assert_array_equal(ta.stack([Tensor(1.0), Tensor(2.0)]).numpy(), [1.0, 2.0])


def test_max_over_the_axes_of_an_empty_tensor():
    x = Tensor(np.zeros((0, 3)), requires_grad=True)
    out = x.max(axis=1)  # (axis= is dim=: PyTorch's (values, indices))
    assert out.values.shape == out.indices.shape == (0,)  # torch
    out.values.sum().backward()
    assert x.grad.shape == (0, 3)
    with pytest.raises(RuntimeError, match=r"max\(\): cannot take the maximum along dim 0"):
        x.max(0)
    with pytest.raises(RuntimeError, match=r"max\(\): the tensor is empty"):
        x.max()
    with pytest.raises(ValueError, match=r"Max: .*axis 0 of shape \(0, 3\) has no elements"):
        x.amax(dim=(0, 1))


def test_dropout_with_p_one_gives_zeros():
    x = Tensor(np.ones(3), requires_grad=True)
    out = F.dropout(x, 1.0)
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.0, 0.0])  # torch
    out.sum().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0])  # torch
    for p in (-0.1, 1.5, math.nan):
        with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
            F.dropout(x, p)


def test_reshape_without_a_shape_is_a_type_error():
    with pytest.raises(TypeError, match=r"reshape\(\).*shape.*reshape\(\(\)\)"):
        Tensor([1.0]).reshape()
    assert Tensor([1.0]).reshape(()).shape == ()


@pytest.mark.parametrize(
    "data, axis, ddof, expected",
    [([1.0, 2.0], None, 2, np.inf), ([1.0, 2.0], 0, 3, np.inf), ([1.0], None, 1, np.nan),
     ([[1.0, 2.0]], (), 1, [[np.nan, np.nan]])],
)  # fmt: skip
def test_var_without_degrees_of_freedom_is_nan_or_inf_with_a_warning(data, axis, ddof, expected):
    x = f64(data)
    with pytest.warns(RuntimeWarning, match=r"Var: ddof=\d.*degrees of freedom"):
        out = x.var(axis=axis, ddof=ddof)
    np.testing.assert_array_equal(out.numpy(), expected)  # numpy and torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(out.numpy(), np.var(np.array(data), axis=axis, ddof=ddof))
    out.sum().backward()  # a gradient of inf / nan, not an exception
    assert not np.isfinite(x.grad).all()


# ------------------------------------------------------------- item 20: raw errors escaping
def test_axis_arguments_of_the_wrong_type_name_the_op():
    x = Tensor(np.ones((2, 1)))
    for reduce, op in ((x.sum, "sum"), (x.mean, "mean"), (x.max, "max"), (x.var, "var")):
        with pytest.raises(TypeError, match=rf"{op}: dim must be an int.*float"):
            reduce(axis=1.0)
        with pytest.raises(TypeError, match=rf"{op}: dim must be an int.*str"):
            reduce(axis="0")
    for bad in (0.0, "1", [1.0]):
        with pytest.raises(TypeError, match=r"squeeze.*dim must be an int"):
            x.squeeze(bad)
    with pytest.raises(TypeError, match=r"unsqueeze.*dim must be an int"):
        x.unsqueeze(1.0)
    assert x.squeeze(np.int64(1)).shape == (2,)
    assert_intact()


def test_attention_scale_must_be_a_number():
    q = f64(np.ones((2, 4)))
    for scale in ("0.5", [0.5], True):
        with pytest.raises(TypeError, match=r"scaled_dot_product_attention: scale must be"):
            F.scaled_dot_product_attention(q, q, q, scale=scale)
        with pytest.raises(TypeError, match=r"attention_composed: scale must be"):
            F.attention_composed(q, q, q, scale=scale)
    out = F.scaled_dot_product_attention(q, q, q, scale=np.float32(0.5))
    assert out.shape == (2, 4)


def test_backward_gradient_must_be_numbers():
    x = Tensor(2.0, requires_grad=True)
    y = x * 3
    for gradient in ("abc", "1.0", object()):
        with pytest.raises(TypeError, match=r"backward\(gradient=...\).*got (str|object)"):
            y.backward(gradient=gradient, retain_graph=True)
    y.backward(gradient=np.array(2.0))
    assert x.grad == 6.0


def test_comparison_of_mismatched_shapes_names_the_operator():
    a, b = Tensor(np.ones(3)), Tensor(np.ones(2))
    for compare, symbol in (
        (lambda: a < b, "<"),
        (lambda: a <= b, "<="),
        (lambda: a > b, ">"),
        (lambda: a >= b, ">="),
        (lambda: a == b, "=="),
        (lambda: a != b, "!="),
        (lambda: a < np.ones((2, 2)), "<"),
    ):
        with pytest.raises(ValueError, match=rf"comparison {symbol}: shapes \(3,\) and"):
            compare()
    assert (a < 2).dtype == np.bool_ and (a == Tensor([1.0, 0.0, 1.0])).numpy().tolist() == [
        True,
        False,
        True,
    ]


def test_custom_forward_returning_none_names_the_op():
    class Forgetful(ta.Function):
        @staticmethod
        def forward(ctx, a):
            a * 2  # forgot `return`

        @staticmethod
        def backward(ctx, grad_out):
            return (grad_out,)

    with pytest.raises(TypeError, match=r"Forgetful.forward returned None.*ndarray"):
        Forgetful.apply(Tensor([1.0], requires_grad=True))
    assert_intact()


def test_custom_backward_returning_a_python_float_names_the_op_and_shapes():
    class Scalar(ta.Function):
        @staticmethod
        def forward(ctx, a):
            return a.sum()

        @staticmethod
        def backward(ctx, grad_out):
            return 1.0  # should be an array of the input's shape

    for shape in ((3,), (1,), (2, 1)):
        x = Tensor(np.ones(shape), requires_grad=True)
        expected = (
            f"Scalar.backward returned a gradient of shape () for input 0, whose shape is {shape}"
        )
        with pytest.raises(RuntimeError, match=re.escape(expected)):
            Scalar.apply(x).backward()
        assert x.grad is None
    assert_intact()


def test_more_argument_types_that_used_to_escape_raw():
    x = Tensor(np.ones((2, 3)), requires_grad=True)
    cases = [
        (lambda: x.reshape(2.0, 3), TypeError, r"Reshape: the shape must be ints"),
        (lambda: x.swapaxes(0.0, 1), TypeError, r"transpose\(0.0, 1\): dim must be an int"),
        (lambda: x.swapaxes(0, 2), IndexError, r"transpose\(0, 2\): dimension out of range"),
        (lambda: x.var(ddof="1"), TypeError, r"Var: ddof must be a number"),
        (lambda: F.dropout(x, "0.5"), TypeError, r"dropout: p must be a number"),
        (lambda: F.dropout(x, None), TypeError, r"dropout: p must be a number"),
        (lambda: x < None, TypeError, r"comparison <: cannot compare a float64 tensor"),
        (lambda: x.eq("a"), TypeError, r"comparison eq: cannot compare"),  # (`==` says False)
        (lambda: x < [1.0, 2.0, 3.0], TypeError, r"comparison <: .* list; make it a tensor"),
        (lambda: ta.concatenate(None), TypeError, r"concatenate: expected a list or tuple"),
        (lambda: ta.stack(x), TypeError, r"stack: expected a list or tuple"),
        (lambda: ta.from_numpy(np.array([1j])), TypeError, r"from_numpy: dtype complex128"),
        (
            lambda: (x * 2).backward(gradient=[[1.0], [2.0, 3.0]]),
            TypeError,
            r"backward\(gradient=...\).*got list",
        ),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()
    assert ta.stack(Tensor([float(i)]) for i in range(3)).shape == (3, 1)  # a generator is fine
    assert_intact()


def test_reductions_over_axis_0_of_a_0d_tensor():
    for axis in (0, -1, None, ()):
        x = Tensor(2.5, requires_grad=True)
        out = x.sum(axis=axis) + x.mean(axis=axis) + x.amax(() if axis is None else axis)
        assert out.shape == () and out.item() == 7.5  # torch: sum(dim=0) of a 0-d tensor
        out.backward()
        assert x.grad == 3.0


def test_max_of_a_row_with_nan_sends_the_gradient_to_the_nan():
    # found comparing edge inputs with torch: is_max was all False, so 0/0 spread NaN everywhere
    x = f64([np.inf, -np.inf, np.nan, 1.0])
    x.max().backward(np.array(0.7))
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.7, 0.0])  # torch
    rows = f64([[1.0, np.nan, np.nan], [3.0, 2.0, 3.0]])
    out = rows.amax(dim=1)
    np.testing.assert_array_equal(out.numpy(), [np.nan, 3.0])
    out.sum().backward()
    # ties split evenly (as documented); torch.amax gives NaN over that row, torch.max() the NaN
    np.testing.assert_array_equal(rows.grad, [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]])


def test_min_of_a_row_with_nan_sends_the_gradient_to_the_nan_as_max_does():
    # Min had its own copy of Max without the NaN rule: 0/0 spread NaN over the whole input
    x = f64([1.0, np.nan, 3.0])
    x.min().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])  # torch
    rows = f64([[np.inf, np.nan, -np.inf], [3.0, 2.0, 2.0]])
    out = rows.amin(dim=1)
    np.testing.assert_array_equal(out.numpy(), [np.nan, 2.0])
    out.sum().backward()
    np.testing.assert_array_equal(rows.grad, [[0.0, 1.0, 0.0], [0.0, 0.5, 0.5]])


def test_min_and_max_refuse_only_an_empty_reduced_axis():
    for name in ("min", "max"):
        x = f64(np.zeros((0, 3)))
        out = getattr(x, name)(axis=1).values  # each of the 0 rows has 3 elements (torch)
        assert out.shape == (0,)
        out.sum().backward()
        assert x.grad.shape == (0, 3)
        with pytest.raises(ValueError, match=rf"{name}\(\): cannot take the {name}imum along"):
            getattr(x, name)(axis=0)
        with pytest.raises(ValueError, match=rf"{name}\(\): the tensor is empty"):
            getattr(x, name)()


def test_max_and_min_with_dim_send_the_gradient_to_the_index_as_pytorch_does():
    # found comparing with torch: max(dim).values split the gradient among tied maxima
    x = f64([1.0, 3.0, 3.0])
    values, index = x.max(dim=0)
    values.backward()
    assert index.item() == 1
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])  # torch: the first maximum
    x = f64([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]])
    x.min(dim=1, keepdim=True).values.sum().backward()
    np.testing.assert_array_equal(x.grad, [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # torch
    x = f64([1.0, np.nan, 3.0, np.nan])
    values, index = x.max(0)
    values.backward()
    assert index.item() == 1 and np.isnan(values.item())
    np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0, 0.0])  # torch: the first NaN
    x = f64([1.0, 3.0, 3.0])
    x.max().backward()  # the reduction (NumPy's form, torch.amax): ties split evenly
    np.testing.assert_array_equal(x.grad, [0.0, 0.5, 0.5])


def test_norm_matches_pytorch_at_the_zero_vector_and_for_every_p():
    # found comparing with torch: norm() of zeros gave NaN gradients, norm(inf) gave 1.0
    x = f64(np.zeros(3))
    x.norm().backward()
    np.testing.assert_array_equal(x.grad, [0.0, 0.0, 0.0])  # torch
    rows = f64([[0.0, 0.0], [3.0, -4.0]])
    out = rows.norm(dim=1)
    out.sum().backward()
    np.testing.assert_array_equal(out.numpy(), [0.0, 5.0])
    np.testing.assert_allclose(rows.grad, [[0.0, 0.0], [0.6, -0.8]])  # torch
    torch_values = {  # p: (norm, gradient) that torch 2.13 gives for [3, -4, 0, 1]
        2: (5.0990195135927845, [0.5883484054145521, -0.7844645405527362, 0.0, 0.196116135138184]),
        3: (4.514357435474001, [0.4416219230355002, -0.7851056409520003, 0.0, 0.0490691025595000]),
        np.inf: (4.0, [0.0, -1.0, 0.0, 0.0]),
        -np.inf: (0.0, [0.0, 0.0, 0.0, 0.0]),
    }
    for p, (norm, grad) in torch_values.items():
        x = f64([3.0, -4.0, 0.0, 1.0])
        out = x.norm(p)
        out.backward()
        np.testing.assert_allclose(out.item(), norm, rtol=1e-12)
        np.testing.assert_allclose(x.grad, grad, rtol=1e-12, atol=1e-15)
    x = f64([3.0, -4.0, 0.0, 1.0])
    out = x.norm(0)  # how many are not zero; torch gives no gradient, here it is 0
    out.backward()
    assert out.item() == 3.0 and not x.grad.any()
    with pytest.raises(ValueError, match="norm: p=.nuc. is not a vector norm; use 2"):
        x.norm("nuc")


def test_constructor_shapes_must_be_non_negative_ints():
    for make in (ta.zeros, ta.ones, ta.randn):
        name = make.__name__
        with pytest.raises(TypeError, match=rf"{name}: the shape must be non-negative ints"):
            make(2.5)
        with pytest.raises(TypeError, match=rf"{name}: the shape must be non-negative ints"):
            make("3")
        with pytest.raises(ValueError, match=rf"{name}: the shape must be non-negative ints.*-1"):
            make(2, -1)
        assert make((2, np.int64(0))).shape == (2, 0) and make().shape == ()
