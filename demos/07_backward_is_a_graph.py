"""Backward is a graph too: the article's head, differentiated twice.

`loss.backward(create_graph=True)` records the backward pass's own ops, so every `.grad` is a
tensor with a graph of its own, which can be differentiated again. On the article's trained
head (float64, the loss of "The earth is like an orange") this script

(a) shows that `query.weight.grad` has a `grad_fn`;
(b) computes the Hessian-vector product H v of the loss with respect to `query.weight` for a
    fixed v, two ways (`autograd.grad` of `(g * v).sum()`, and `autograd.functional.hvp`),
    and checks it against central differences of the gradient;
(c) measures the curvature along the gradient, uᵀ H u with u = g / |g|, and compares the loss
    after a Newton step along -u with what the quadratic model predicts;
(d) draws the gradient's graph, the backward pass as ops, to `backward_as_ops.svg` and `.png`
    in `--out` (default `out/`).

    python demos/07_backward_is_a_graph.py [--out DIR]
"""

import argparse
from pathlib import Path

import numpy as np

import tinygrad_attn as ta
from tinygrad_attn import nn
from tinygrad_attn.examples import SENTENCES, backward_as_ops_picture, trained_head
from tinygrad_attn.examples.article import embed, sense_target, tokenize
from tinygrad_attn.functional import mse_loss
from tinygrad_attn.viz import RendererNotFound, render_graph, trace

SENTENCE = SENTENCES[0]
EPS = 1e-5  # the step of the central differences (float64)


def loss_with_query(head: nn.SelfAttention, w_query: ta.Tensor) -> ta.Tensor:
    """The article's loss on SENTENCE (`examples.sense_loss`) with `query.weight` replaced by
    `w_query`: a function of that one matrix, for `autograd.functional`."""
    tokens = tokenize(SENTENCE)
    x = ta.tensor(embed(tokens, np.float64))  # (T, F)
    out = nn.functional_call(head, {"query.weight": w_query}, x)  # (T, F)
    return mse_loss(out[tokens.index("orange")], ta.tensor(sense_target(SENTENCE, np.float64)))


def gradient_at(head: nn.SelfAttention, w_query: np.ndarray) -> np.ndarray:
    """d loss / d query.weight at `w_query`, as an array (one ordinary backward)."""
    w = ta.tensor(w_query, requires_grad=True)
    (g,) = ta.autograd.grad(loss_with_query(head, w), w)
    return g.numpy()


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="out", help="folder for the pictures (default: out)")
    args = parser.parse_args(argv)
    ta.set_default_dtype(np.float64)
    head = trained_head()
    w = head.query.weight

    print("(a) the gradient is a tensor with a graph")
    g, options = backward_as_ops_picture(head, SENTENCE)  # loss.backward(create_graph=True)
    print(f"    query.weight.grad.grad_fn: {g.grad_fn!r}, made by {g.grad_fn.made_by}")
    ops = trace(g).ops
    made = sum(op.node.made_by is not None for op in ops)
    print(f"    its graph: {len(ops)} ops, {made} made by the backward pass, {len(ops) - made} of")
    print("    the forward pass whose values they read")

    print("(b) the Hessian-vector product H v, v fixed")
    v = ta.tensor(np.random.default_rng(0).standard_normal(tuple(w.shape)))  # (5, 5)
    (hv,) = ta.autograd.grad((g * v).sum(), w, retain_graph=True)  # d/dw of gᵀv
    _, hv_functional = ta.autograd.functional.hvp(lambda q: loss_with_query(head, q), w, v)
    numeric = (
        gradient_at(head, w.numpy() + EPS * v.numpy())
        - gradient_at(head, w.numpy() - EPS * v.numpy())
    ) / (2 * EPS)
    scale = np.abs(numeric).max()
    by_grad = np.abs(hv.numpy() - numeric).max()
    by_hvp = np.abs(hv_functional.numpy() - numeric).max()
    print(f"    H v by autograd.grad:  max |H v - central differences| = {by_grad:.1e}")
    print(f"    H v by functional.hvp: max |H v - central differences| = {by_hvp:.1e}")
    print(f"    (the largest entry of H v is {scale:.3e})")

    print("(c) the curvature along the gradient")
    g_norm = float(np.linalg.norm(g.numpy()))
    u = ta.tensor(g.numpy() / g_norm)  # the gradient's direction, |u| = 1
    loss, hu = ta.autograd.functional.hvp(lambda q: loss_with_query(head, q), w, u)
    curvature = float((hu * u).sum())  # uᵀ H u
    step = g_norm / curvature  # minimises loss - t |g| + t² uᵀHu / 2
    after = loss_with_query(head, ta.tensor(w.numpy() - step * u.numpy())).item()
    predicted = g_norm**2 / (2 * curvature)
    print(f"    |g| = {g_norm:.3e},  uᵀ H u = {curvature:.3e}")
    print(f"    Newton step t = |g| / uᵀHu = {step:.3e}: loss {loss.item():.3e} -> {after:.3e}")
    print(f"    the quadratic model predicted a drop of {predicted:.3e}, the step gave "
          f"{loss.item() - after:.3e}")  # fmt: skip

    print("(d) the backward pass as ops")
    out = Path(args.out)
    try:
        for suffix in (".svg", ".png"):
            print(f"    wrote {render_graph(g, path=out / f'backward_as_ops{suffix}', **options)}")
    except RendererNotFound as err:
        print(f"    no picture: {err}")
    return {"hv_error": max(by_grad, by_hvp), "hv_scale": scale, "curvature": curvature}


if __name__ == "__main__":
    main()
