"""A measuring stick for the per-op row: the least a reverse-mode engine of this shape can do.

One class per op, a heap ordered by creation number, gradients summed in a dict: the same
algorithm as tinygrad_attn's engine with none of its guarantees (no read-only locks, no hooks or
observers, no steps yielded, no shape, dtype or arity checks, no release). It runs the same
100-op chain as `attention.py`'s per-op row, so the difference between the two is what the
guarantees cost per op. Not a library: nothing imports it.

    python benchmarks/minimal_engine.py
"""

from __future__ import annotations

import gc
import heapq
import itertools
import statistics
import time

import numpy as np

_sequence = itertools.count()
_constants: dict = {}


class Tensor:
    requires_grad = False
    grad_fn = None
    grad = None

    def __init__(self, data: np.ndarray, requires_grad: bool = False) -> None:
        self.data = data
        self.requires_grad = requires_grad

    def __mul__(self, other: float) -> Tensor:
        return Mul.apply(self, constant(other, self))

    def __add__(self, other: float) -> Tensor:
        return Add.apply(self, constant(other, self))

    def sum(self) -> Tensor:
        return Sum.apply(self)


def constant(value: float, like: Tensor) -> Tensor:
    key = (value, like.data.dtype)
    if key not in _constants:
        _constants[key] = Tensor(np.asarray(value, like.data.dtype))
    return _constants[key]


class Op:
    saved = ()

    @classmethod
    def apply(cls, *inputs: Tensor) -> Tensor:
        node = cls()
        result = Tensor(cls.forward(node, *[t.data for t in inputs]))
        needs = [t.requires_grad for t in inputs]
        if True in needs:
            node.parents = tuple([t.grad_fn or t for t in inputs])
            node.needs = needs
            node.sequence = next(_sequence)
            result.requires_grad, result.grad_fn = True, node
        return result


class Mul(Op):
    @staticmethod
    def forward(node: Op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        node.saved = (a, b)
        return a * b

    @staticmethod
    def backward(node: Op, grad: np.ndarray) -> tuple:
        a, b = node.saved
        return grad * b, None


class Add(Op):
    @staticmethod
    def forward(node: Op, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return a + b

    @staticmethod
    def backward(node: Op, grad: np.ndarray) -> tuple:
        return grad, None


class Sum(Op):
    @staticmethod
    def forward(node: Op, a: np.ndarray) -> np.ndarray:
        node.shape = a.shape
        return a.sum()

    @staticmethod
    def backward(node: Op, grad: np.ndarray) -> tuple:
        spread = np.empty(node.shape, grad.dtype)
        spread[...] = grad
        return (spread,)


def backward(root: Tensor) -> None:
    grads = {root.grad_fn: np.ones((), root.data.dtype)}
    ready = [(-root.grad_fn.sequence, root.grad_fn)]
    while ready:
        node = heapq.heappop(ready)[1]
        grad_inputs = node.backward(node, grads.pop(node))
        for parent, needs, grad in zip(node.parents, node.needs, grad_inputs):
            if not needs:
                continue
            if parent in grads:
                grads[parent] = grads[parent] + grad
            elif isinstance(parent, Op):
                grads[parent] = grad
                heapq.heappush(ready, (-parent.sequence, parent))
            elif parent.grad is None:
                parent.grad = grad.copy()
            else:
                parent.grad += grad


def main() -> None:
    x = Tensor(np.random.default_rng(0).random((4, 4)).astype(np.float32), requires_grad=True)

    def run() -> None:  # the per-op row of attention.py: 101 ops forward and backward
        y = x
        for _ in range(50):
            y = y * 1.0001
            y = y + 0.5
        x.grad = None
        backward(y.sum())

    for _ in range(50):
        run()
    gc.disable()
    rounds = []
    for _ in range(7):
        start = time.process_time()
        for _ in range(50):
            run()
        rounds.append((time.process_time() - start) / 50 / 101)
    print(f"minimal engine: {statistics.median(rounds) * 1e6:.2f} us per op (fwd+bwd)")


if __name__ == "__main__":
    main()
