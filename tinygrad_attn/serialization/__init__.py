"""Checkpoints in PyTorch's own file format, both ways, without PyTorch: PyTorch's
`torch.serialization` (`save`, `load`, `add_safe_globals`, `get_safe_globals`,
`clear_safe_globals`, `safe_globals`); `ta.save` and `ta.load` are these.

The file is a zip archive (zip_archive.py) holding `data.pkl`, a pickle of the object in which
every tensor is a call of `torch._utils._rebuild_tensor_v2(storage, offset, size, stride,
requires_grad, hooks)` and every storage a persistent id `('storage', torch.FloatStorage, key,
'cpu', numel)` whose bytes are the record `data/<key>`. writing.py writes it; reading.py reads
it, with rebuild.py's meaning for each name and, when `weights_only=True` (the default),
weights_only.py's interpreter, which runs nothing but the rebuild functions and plain containers.
checkpoint_format.py holds PyTorch's names.

NumPy values are written as PyTorch has them, so that `torch.load(weights_only=True)` reads
every file `ta.save` writes: an ndarray of numbers or bools as a tensor, a NumPy scalar as a
Python number, a dtype as `torch.float32` and so on, `ta.device` as `torch.device`.

This package re-exports; it defines nothing. None of it computes: no tensor maths, no gradients.
"""

from .checkpoint_format import SerializationError
from .reading import add_safe_globals, clear_safe_globals, get_safe_globals, load, safe_globals
from .writing import save

__all__ = [
    "SerializationError",
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "load",
    "safe_globals",
    "save",
]
