"""`nn.Parameter` and `nn.Buffer`: the Tensor subclasses that tell a Module what an attribute is.

As in PyTorch, assigning a `Parameter` to a module registers it as a parameter (`parameters()`,
`state_dict()`, what an optimizer trains); assigning a `Buffer` registers its tensor as a buffer
(`state_dict()`, never trained). A plain Tensor, even one that requires grad, is an ordinary
attribute. This module only defines the two classes; the registration is nn/module.py's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..state import get_default_dtype
from ..tensor import Tensor, _check_can_require_grad

__all__ = ["Buffer", "Parameter"]


def _shared_array(data: Any) -> np.ndarray:
    """The array a Parameter or Buffer holds: a Tensor's own memory (shared, as PyTorch), a
    copy of other data (as `ta.tensor`), an empty float tensor for None."""
    if data is None:
        return np.empty(0, dtype=get_default_dtype())
    if isinstance(data, Tensor):
        return data._data
    return Tensor(data)._data  # (Tensor's dtype policy and errors; a copy)


class Parameter(Tensor):
    """A leaf Tensor that a Module registers as a parameter when it is assigned
    (`self.weight = nn.Parameter(torch.ones(4))`), as PyTorch's.

    `Parameter(t)` shares `t`'s memory (writing into one changes the other) and is a leaf even
    if `t` was computed; it requires grad unless `requires_grad=False` (a frozen parameter is
    still a parameter). Ops on a Parameter give plain Tensors. `Parameter()` is an empty float
    tensor; other data (an ndarray, a list) is copied, as `ta.tensor` does.
    """

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        array = _shared_array(data)
        if requires_grad:
            _check_can_require_grad(array.dtype, "nn.Parameter(requires_grad=True)")
        self._data = array
        self.requires_grad = bool(requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """Marks a tensor as a buffer when assigned to a Module (`self.mask = nn.Buffer(t)`), as
    `register_buffer(name, t, persistent)` does; the module keeps a plain tensor sharing the
    memory. `persistent=False` leaves it out of `state_dict()`."""

    def __init__(self, data: Any = None, *, persistent: bool = True) -> None:
        self._data = _shared_array(data)
        self.persistent = bool(persistent)
