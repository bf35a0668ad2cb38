"""`torch.utils.checkpoint`: activation checkpointing, as far as values and gradients go.

PyTorch's `checkpoint(fn, *args)` frees `fn`'s activations after the forward pass and
recomputes them in backward, trading time for memory. Here it runs `fn` as it is: the same
outputs and the same gradients, the activations kept (no memory saved). The keyword arguments
PyTorch takes (`use_reentrant`, `preserve_rng_state`, ...) are accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(
    function: Callable, *args: Any, use_reentrant: bool | None = None,
    context_fn: Any = None, determinism_check: str = "default", debug: bool = False,
    preserve_rng_state: bool = True, **kwargs: Any,
) -> Any:  # fmt: skip
    """`function(*args, **kwargs)`: the value, and the gradients, checkpointing gives."""
    return function(*args, **kwargs)


def checkpoint_sequential(
    functions: Sequence[Callable] | Any, segments: int, input: Any,  # noqa: A002
    use_reentrant: bool | None = None, **kwargs: Any,
) -> Any:  # fmt: skip
    """`input` through each of `functions` (a list, or an `nn.Sequential`) in turn."""
    for function in functions.children() if hasattr(functions, "children") else functions:
        input = function(input)  # noqa: A001
    return input
