"""Ops with a planted backward bug, each beside its correct form: shared by the gradcheck and
check_gradients tests (a helper module, not collected: its name does not start with test_)."""

import numpy as np

from tinygrad_attn import Function


class Square(Function):
    """out = a * a;  da = 2 a dout"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (2 * a * grad_out,)


class SquareMissingTwo(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (a * grad_out,)  # the planted bug: the 2 of d(a**2) is missing


class SquareSignFlipped(Square):
    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (-2 * a * grad_out,)


class MatrixProduct(Function):
    """out = a @ b;  da = dout @ b^T,  db = a^T @ dout"""

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return grad_out @ b.T, a.T @ grad_out


class MatrixProductTransposed(MatrixProduct):
    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        return b @ grad_out.T, a.T @ grad_out  # the planted bug: (dout @ b^T)^T


class BiasAdd(Function):
    """out = x + bias (bias broadcast over rows);  dx = dout,  dbias = sum of dout over rows"""

    @staticmethod
    def forward(ctx, x, bias):
        return x + bias

    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out.sum(axis=0)


class BiasAddFirstRowOnly(BiasAdd):
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out[0]  # the planted bug: one broadcast copy instead of the sum


class BiasAddAveraged(BiasAdd):
    @staticmethod
    def backward(ctx, grad_out):
        return grad_out, grad_out.mean(axis=0)  # the planted bug: mean instead of sum


class Gather(Function):
    """out = x[index];  dx = dout added at index (repeats accumulate)"""

    @staticmethod
    def forward(ctx, x, index):
        ctx.shape, ctx.index = x.shape, index
        return x[index]

    @staticmethod
    def backward(ctx, grad_out):
        grad_x = np.zeros(ctx.shape)
        np.add.at(grad_x, ctx.index, grad_out)
        return grad_x, None


class GatherOverwrites(Gather):
    @staticmethod
    def backward(ctx, grad_out):
        grad_x = np.zeros(ctx.shape)
        grad_x[ctx.index] += grad_out  # the planted bug: a repeated index keeps one value
        return grad_x, None


class Sine(Function):
    """out = sin(a);  da = cos(a) dout"""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.sin(a)

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (np.cos(a) * grad_out,)


class SineForgotten(Sine):
    @staticmethod
    def backward(ctx, grad_out):
        return (None,)  # the planted bug: no gradient at all


REPEATED = np.array([0, 2, 0, 0])

PLANTED = [
    # (correct op, buggy op, inputs, words the hint must contain)
    (Square, SquareMissingTwo, [(3, 4)], ["constant factor", "0.5 times"]),
    (Square, SquareSignFlipped, [(2, 3)], ["sign flipped"]),
    (MatrixProduct, MatrixProductTransposed, [(3, 3), (3, 3)], ["transposed"]),
    (BiasAdd, BiasAddFirstRowOnly, [(3, 4), (4,)], ["missing broadcast sum"]),
    (BiasAdd, BiasAddAveraged, [(3, 4), (4,)], ["constant factor", "averaged", "1/3"]),
    (Gather, GatherOverwrites, [(3, 2), REPEATED], ["missing accumulation", "np.add.at"]),
    (Sine, SineForgotten, [(2, 2)], ["zero gradient"]),
]
PLANTED_IDS = [bug.__name__ for _, bug, _, _ in PLANTED]


class Cube(Function):
    """out = a ** 3;  da = 3 a^2 dout (a backward written with Tensor ops: twice-differentiable)"""

    tensor_backward = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a * a

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return (3 * a * a * grad_out,)


class CubeDetachedSlope(Cube):
    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        # the planted bug: the slope 3 a^2 is right, but detached, so its own derivative is lost
        return (3 * (a * a).detach() * grad_out,)
