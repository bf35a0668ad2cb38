"""Random number generators a caller owns: `ta.Generator`, PyTorch's `torch.Generator`.

The package has one global generator (state.py, seeded by `ta.manual_seed`). A `Generator` is a
second, private stream: `ta.randperm(n, generator=g)` or `DataLoader(..., generator=g)` draws
from `g` and leaves the global stream untouched, so shuffling data cannot change a model's
initialisation. `numpy_generator(generator, fn)` is the one place that chooses between the two.

The numbers are NumPy's (PCG64), never PyTorch's: a seed gives the same numbers here every time,
not the numbers PyTorch gives for it. So a state (`get_rng_state()`, `Generator.get_state()`) is
a uint8 tensor as PyTorch's is, for checkpoints, but it holds PCG64's 37 bytes, not the 5056 of
PyTorch's Mersenne Twister: one side's state does not load on the other (a clear error says so).
This module holds no sampling code of its own.
"""

from __future__ import annotations

import contextlib
import operator
import secrets
from collections.abc import Iterator
from typing import Any

import numpy as np

from .state import get_rng, manual_seed
from .tensor_methods import check_device, device

__all__ = [
    "Generator",
    "fork_rng",
    "get_rng_state",
    "manual_seed",
    "numpy_generator",
    "set_rng_state",
]

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

    def get_state(self) -> Any:
        """The stream's state, a uint8 tensor (37 bytes of PCG64) that `set_state` restores."""
        return _state_tensor(self._rng)

    def set_state(self, new_state: Any) -> Generator:
        """Continue the stream from a state `get_state` returned; returns `self`."""
        _restore(self._rng, new_state, "Generator.set_state")
        return self

    def __repr__(self) -> str:
        return f"Generator(initial_seed={self._initial_seed})"


_STATE_BYTES = 37  # PCG64: 16 bytes of state, 16 of increment, 1 + 4 of a buffered half draw


def _state_tensor(rng: np.random.Generator) -> Any:
    from .creation import tensor

    pcg = rng.bit_generator.state
    raw = (
        pcg["state"]["state"].to_bytes(16, "little")
        + pcg["state"]["inc"].to_bytes(16, "little")
        + bytes([pcg["has_uint32"]])
        + pcg["uinteger"].to_bytes(4, "little")
    )
    return tensor(np.frombuffer(raw, dtype=np.uint8).copy())


def _restore(rng: np.random.Generator, new_state: Any, fn: str) -> None:
    raw = np.asarray(new_state)
    if raw.dtype != np.uint8 or raw.shape != (_STATE_BYTES,):
        where = " (PyTorch's own state has 5056)" if raw.size == 5056 else ""
        raise ValueError(
            f"{fn}: expected the uint8 tensor of {_STATE_BYTES} bytes that get_rng_state() / "
            f"Generator.get_state() returns here, got dtype {raw.dtype} shape {raw.shape}{where}. "
            "The streams are NumPy's PCG64, not PyTorch's, so a state saved by PyTorch cannot "
            "be continued here: seed with manual_seed instead."
        )
    raw = raw.tobytes()
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {
            "state": int.from_bytes(raw[:16], "little"),
            "inc": int.from_bytes(raw[16:32], "little"),
        },
        "has_uint32": raw[32],
        "uinteger": int.from_bytes(raw[33:], "little"),
    }


def get_rng_state() -> Any:
    """The global stream's state (`ta.manual_seed`'s), as `torch.get_rng_state()`: a uint8
    tensor to keep in a checkpoint and give back to `set_rng_state`."""
    return _state_tensor(get_rng())


def set_rng_state(new_state: Any) -> None:
    """Continue the global stream from a state `get_rng_state()` returned."""
    _restore(get_rng(), new_state, "set_rng_state")


@contextlib.contextmanager
def fork_rng(devices: Any = None, enabled: bool = True, **_: Any) -> Iterator[None]:
    """As `torch.random.fork_rng`: the global stream is put back as it was when the block
    ends, whatever the block drew."""
    if not enabled:
        yield
        return
    saved = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(saved)


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
