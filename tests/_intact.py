"""`assert_intact()`: after an error, a fresh forward and backward still give PyTorch's values.

Imported by the misuse tests (tests/test_inplace.py, tests/test_misuse.py). The expected values
were computed once with torch 2.13 (float64) for the same program:
`loss = (softmax(x @ W, -1) * c).sum()`.
"""

from __future__ import annotations

import numpy as np

import tinygrad_attn as ta

LOSS = 7.26606484267896
X_GRAD = np.array(
    [
        [0.1782929644634983, 0.1782929644634983, 0.1782929644634983],
        [0.17419296939658405, 0.17419296939658438, 0.17419296939658468],
    ]
)
W_GRAD = np.array(
    [
        [-0.0975163955509303, -0.04816038867847074, 0.023064728276905793, 0.12261205595249541],
        [-0.16640047003071945, -0.0777435178766681, 0.04214305641061025, 0.20200093149677753],
        [-0.2352845445105086, -0.10732664707486544, 0.06122138454431471, 0.28138980704105965],
    ]
)


def assert_intact() -> None:
    """A fresh graph (grad mode on, the arrays writable again) gives torch's loss and grads."""
    assert ta.is_grad_enabled()
    x = ta.Tensor(np.arange(6.0).reshape(2, 3) / 10, requires_grad=True)
    w = ta.Tensor(np.arange(12.0).reshape(3, 4) / 7 - 0.5, requires_grad=True)
    c = np.arange(8.0).reshape(2, 4)
    loss = ((x @ w).softmax(-1) * c).sum()
    loss.backward()
    np.testing.assert_allclose(loss.item(), LOSS, rtol=1e-13)
    np.testing.assert_allclose(x.grad, X_GRAD, rtol=1e-12)
    np.testing.assert_allclose(w.grad, W_GRAD, rtol=1e-12)
    assert x.numpy().flags.writeable and w.numpy().flags.writeable  # released graph: no lock left
    with ta.no_grad():
        w -= 0.5 * w.grad  # the in-place update still works on the same leaf
    np.testing.assert_allclose(w.numpy(), np.arange(12.0).reshape(3, 4) / 7 - 0.5 - 0.5 * W_GRAD)
