"""nn.utils' helpers over many parameters: clip_grad_value_ (in place, NaN kept, None skipped,
PyTorch's foreach error on the CPU), parameters_to_vector (a copy in the graph) and
vector_to_parameters (the parameters then view the vector, as in PyTorch)."""

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn.nn.utils import clip_grad_value_, parameters_to_vector, vector_to_parameters


def test_clip_grad_value_clamps_in_place():
    a, b, c = (ta.nn.Parameter(ta.zeros(3)) for _ in range(3))
    a.grad = ta.tensor([-5.0, 0.5, np.nan])
    b.grad = ta.tensor([2.0, -0.25, 1.0])
    grad = a.grad
    assert clip_grad_value_([a, b, c], clip_value=1.0) is None
    assert a.grad is grad and c.grad is None
    np.testing.assert_array_equal(a.grad.numpy(), [-1.0, 0.5, np.nan])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, -0.25, 1.0])
    clip_grad_value_(b, 0.5)  # a single tensor
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, -0.25, 0.5])
    with pytest.raises(RuntimeError, match="foreach=True"):
        clip_grad_value_([a], 1.0, foreach=True)


def test_parameters_to_vector_and_back():
    w = ta.nn.Parameter(ta.tensor([[1.0, 2.0], [3.0, 4.0]]))
    b = ta.nn.Parameter(ta.tensor([5.0, 6.0, 7.0]))
    vec = parameters_to_vector([w, b])
    np.testing.assert_array_equal(vec.numpy(), np.arange(1, 8, dtype=np.float32))
    (vec * ta.arange(7).float()).sum().backward()  # gradients flow to each parameter
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(b.grad.numpy(), [4, 5, 6])
    new = ta.tensor(np.arange(10, dtype=np.float32))
    vector_to_parameters(new, iter([w, b]))
    np.testing.assert_array_equal(w.numpy(), [[0, 1], [2, 3]])
    np.testing.assert_array_equal(b.numpy(), [4, 5, 6])
    with ta.no_grad():
        new[0] = 100.0  # as in PyTorch, the parameters now share the vector's memory
    assert w.numpy()[0, 0] == 100.0
    with pytest.raises(TypeError, match="expected a Tensor, but got: ndarray"):
        vector_to_parameters(np.zeros(7), [w, b])
    with pytest.raises(RuntimeError, match="vec has 5 elements"):
        vector_to_parameters(ta.zeros(5), [w, b])
