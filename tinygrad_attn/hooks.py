"""What registering a hook returns: a handle that removes it (PyTorch's `RemovableHandle`).

`Tensor.register_hook` and the `nn.Module` hooks return one. This module imports nothing from
the package.
"""

from __future__ import annotations

from collections.abc import Callable


class RemovableHandle:
    """What `register_hook` returns: `handle.remove()` takes the hook off (also callable, as
    the plain function this package returned before)."""

    def __init__(self, remove: Callable[[], None]) -> None:
        self.remove = remove

    def __call__(self) -> None:
        self.remove()

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()
