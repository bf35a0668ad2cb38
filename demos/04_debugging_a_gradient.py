"""Debugging a gradient: step through backward, explain a step, catch two planted bugs.

Run it:                 python demos/04_debugging_a_gradient.py
Stop in the debugger:   python demos/04_debugging_a_gradient.py --break
    It stops just before `loss.backward()`. At the (Pdb) prompt type:
        b ta.ops.softmax.Softmax.backward   break when the engine reaches the softmax
        c                                   run to it
        where                               three frames from your line: Tensor.backward,
                                            backward_steps (the engine's one loop), and
                                            Softmax.backward
        p ctx.axis, grad_out.shape          the node is the op's ctx: its attributes are here
        n                                   step through the formula line by line
        c                                   let the pass finish and the demo continue

The sentence is the reference article's "The earth is like an orange": one self-attention
head looks at it, and we ask the "orange" token's output to move towards a "fruit" direction.
"""

from __future__ import annotations

import sys

import numpy as np

import tinygrad_attn as ta
from tinygrad_attn import Tensor

TOKENS = ["The", "earth", "is", "like", "an", "orange"]
WIDTH = 4


def sentence_and_head(seed: int = 0) -> tuple[Tensor, list[Tensor]]:
    """Word vectors for the sentence (no gradient) and the head's three projections."""
    rng = np.random.default_rng(seed)
    x = Tensor(rng.standard_normal((len(TOKENS), WIDTH)), name="x")  # (T, D)
    weights = [
        Tensor(rng.standard_normal((WIDTH, WIDTH)) / 2, requires_grad=True, name=name)
        for name in ("w_query", "w_key", "w_value")
    ]
    return x, weights


def attention_loss(x: Tensor, w_query: Tensor, w_key: Tensor, w_value: Tensor) -> Tensor:
    """softmax(Q K^T / sqrt(D)) V, then how far "orange"'s output is from the fruit direction."""
    q, k, v = x @ w_query, x @ w_key, x @ w_value  # (T, D) each
    scores = q @ k.T / np.sqrt(WIDTH)  # (T, T)
    scores.name = "scores"
    weights = scores.softmax(axis=-1)  # (T, T): the attention; row i says where token i looks
    weights.name = "weights"
    output = weights @ v  # (T, D): the head's output, the weights applied to the values
    output.name = "output"
    fruit = np.array([1.0, 0.0, 0.0, 0.0])
    return ((output[len(TOKENS) - 1] - fruit) ** 2).sum()


def heading(text: str) -> None:
    print(f"\n=== {text} " + "=" * max(0, 70 - len(text)))


def step_through_backward() -> None:
    heading("1. backward, one step at a time")
    x, weights = sentence_and_head()
    loss = attention_loss(x, *weights)
    for step in loss.backward_steps():
        print(step)  # one line: the op, its output, the gradient in and out
        if step.op == "Softmax":
            softmax_step = step.explain()  # several lines; read while the step is alive
    heading("2. the Softmax step, explained")
    print("(only the last row has a gradient: the loss looks at the 'orange' output alone)")
    print(softmax_step)


def stop_in_the_debugger() -> None:
    heading("0. in the debugger (see the module docstring for what to type)")
    x, weights = sentence_and_head()
    loss = attention_loss(x, *weights)
    breakpoint()  # noqa: T100
    loss.backward()


# ------------------------------------------------------------ a custom op with two bugs
class RowNormalize(ta.Function):
    """y = x / |x| per row;  dx = (dy - y * sum(dy * y)) / |x|"""

    @staticmethod
    def forward(ctx, x):
        norm = np.sqrt((x * x).sum(axis=-1, keepdims=True))  # (T, 1)
        y = x / norm  # BUG 1: no epsilon, so an all-zero row gives 0/0 = NaN
        ctx.save_for_backward(y, norm)
        return y

    @staticmethod
    def backward(ctx, grad_out):
        y, norm = ctx.saved_tensors
        return (grad_out / norm,)  # BUG 2: forgot "- y * sum(dy * y)", the projection


class RowNormalizeFixed(ta.Function):
    """y = x / n per row, n = |x| + eps;  dx = (dy - y * sum(dy * y) * |x| / n) / n"""

    @staticmethod
    def forward(ctx, x, eps=1e-6):
        norm = np.sqrt((x * x).sum(axis=-1, keepdims=True))  # (T, 1)
        y = x / (norm + eps)  # (T, D)
        ctx.save_for_backward(y, norm)
        ctx.eps = eps
        return y

    @staticmethod
    def backward(ctx, grad_out):
        y, norm = ctx.saved_tensors
        along = (grad_out * y).sum(axis=-1, keepdims=True) * norm / (norm + ctx.eps)  # (T, 1)
        return ((grad_out - y * along) / (norm + ctx.eps),)


def cosine_loss(x: Tensor, w_query: Tensor, w_key: Tensor, op: type) -> Tensor:
    """Cosine-similarity attention scores: normalise queries and keys, then Q K^T."""
    q = op.apply(x @ w_query)  # (T, D), unit rows
    k = op.apply(x @ w_key)  # (T, D)
    weights = (q @ k.T * 4.0).softmax(axis=-1)  # (T, T)
    return (weights * weights).sum()


def find_the_planted_bugs() -> None:
    x, (w_query, w_key, _) = sentence_and_head()
    padded = Tensor(np.vstack([x.numpy(), np.zeros((1, WIDTH))]), name="x_padded")  # (T+1, D)

    heading("3. a NaN loss, and anomaly mode pointing at its source")
    with np.errstate(invalid="ignore"):  # NumPy would also warn; keep the output readable
        print("loss with a padding token:", cosine_loss(padded, w_query, w_key, RowNormalize))
        try:
            with ta.detect_anomaly():
                cosine_loss(padded, w_query, w_key, RowNormalize)
        except ta.AnomalyError as err:
            print(f"AnomalyError: {err}")

    heading("4. gradcheck finds the wrong backward")
    small = Tensor(np.random.default_rng(1).standard_normal((3, WIDTH)), requires_grad=True)
    small.name = "rows"
    try:
        ta.gradcheck(lambda t: RowNormalize.apply(t), [small])
    except ta.GradcheckError as err:
        print(f"GradcheckError: {err}")

    heading("5. the fixed op passes both")
    print("gradcheck:", ta.gradcheck(lambda t: RowNormalizeFixed.apply(t), [small]))
    with ta.detect_anomaly():
        loss = cosine_loss(padded, w_query, w_key, RowNormalizeFixed)
        loss.backward()
    print(f"loss {loss.item():.6f}, |grad w_query| = {np.linalg.norm(w_query.grad):.6f}")


def an_error_that_teaches() -> None:
    heading("6. changing a tensor that backward still needs")
    x, (w_query, w_key, w_value) = sentence_and_head()
    q, k, v = x @ w_query, x @ w_key, x @ w_value  # (T, D) each
    v.name = "v"
    weights = (q @ k.T / np.sqrt(WIDTH)).softmax(axis=-1)  # (T, T)
    out = weights @ v  # MatMul saved `v`: d(weights) = dout v^T needs it
    v.mul_(2.0)  # in place, after the MatMul used it (recorded: v is now made by Mul)
    try:
        out.sum().backward()  # refused: d(weights) would use values MatMul never saw
    except RuntimeError as err:
        print(f"RuntimeError: {err}")
    out = weights @ v  # the product made again, from the values v holds now
    out.sum().backward()
    print(f"with the product made again: backward ran, |grad w_value| = {w_value.grad.norm():.4f}")


def main() -> None:
    np.set_printoptions(precision=4, suppress=True)
    if "--break" in sys.argv:
        stop_in_the_debugger()
    step_through_backward()
    find_the_planted_bugs()
    an_error_that_teaches()


if __name__ == "__main__":
    main()
