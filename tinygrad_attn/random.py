"""Random number generators a caller owns: `ta.Generator`, PyTorch's `torch.Generator`.

The package has one global generator (state.py, seeded by `ta.manual_seed`). A `Generator` is a
second, private stream: `ta.randperm(n, generator=g)` or `DataLoader(..., generator=g)` draws
from `g` and leaves the global stream untouched, so shuffling data cannot change a model's
initialisation. `numpy_generator(generator, fn)` is the one place that chooses between the two.

The numbers are NumPy's (PCG64), never PyTorch's: a seed gives the same numbers here every time,
not the numbers PyTorch gives for it. This module holds no sampling code of its own.
"""

from __future__ import annotations

import operator
import secrets
from typing import Any

import numpy as np

from .state import get_rng
from .tensor_methods import check_device, device

__all__ = ["Generator", "numpy_generator"]

# As PyTorch: a Generator nobody has seeded starts from this fixed seed, so it is reproducible.
_DEFAULT_SEED = 67280421310721
_SEED_LOW, _SEED_HIGH = -(2**63), 2**64 - 1  # PyTorch's accepted range (negatives wrap)


class _SeedTypeError(TypeError, RuntimeError):
    """A seed that is not an int (PyTorch raises RuntimeError; a wrong type is a TypeError)."""


def _seed_value(seed: Any) -> int:
    """`seed` as the unsigned 64-bit integer PyTorch would store (-1 -> 2**64 - 1)."""
    if isinstance(seed, (bool, np.bool_)):
        raise _SeedTypeError(f"Generator.manual_seed: expected an int seed, got the bool {seed}")
    try:
        value = operator.index(seed)
    except TypeError:
        raise _SeedTypeError(
            f"Generator.manual_seed: expected an int seed, got {type(seed).__name__} {seed!r}"
        ) from None
    if not _SEED_LOW <= value <= _SEED_HIGH:
        raise ValueError(
            f"Generator.manual_seed: seed {value} is outside [-2**63, 2**64 - 1], the range "
            "PyTorch accepts"
        )
    return value % 2**64


class Generator:
    """A random number generator of one's own, as `torch.Generator()`.

    `g = ta.Generator().manual_seed(0)` then `ta.randperm(5, generator=g)`,
    `ta.randn(2, 3, generator=g)`, `DataLoader(ds, shuffle=True, generator=g)`. Seeding with the
    same number gives the same stream as `ta.manual_seed` gives the global generator.
    """

    def __init__(self, device: Any = "cpu") -> None:
        check_device(device)
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed` (an int in [-2**63, 2**64 - 1]); returns `self`."""
        self._initial_seed = _seed_value(seed)
        self._rng = np.random.default_rng(self._initial_seed)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy; returns the new seed."""
        new_seed = secrets.randbits(63)
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._initial_seed

    @property
    def device(self) -> device:
        """Always `device(type='cpu')`."""
        return device("cpu")

    def __repr__(self) -> str:
        return f"Generator(initial_seed={self._initial_seed})"


def numpy_generator(generator: Generator | None, fn: str) -> np.random.Generator:
    """The NumPy generator a sampling function `fn` draws from: `generator`'s, or the global
    one (`ta.manual_seed`) when it is None."""
    if generator is None:
        return get_rng()
    if not isinstance(generator, Generator):
        raise TypeError(
            f"{fn}: generator must be a ta.Generator (ta.Generator().manual_seed(seed)), got "
            f"{type(generator).__name__}"
        )
    return generator._rng
