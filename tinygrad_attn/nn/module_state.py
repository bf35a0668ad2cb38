"""A Module's state, as PyTorch's: `state_dict`, `load_state_dict`, dtype and device
conversion (`to`, `double`, `float`, `half`, `type`, `cpu`) and `zero_grad`.

`Module` inherits these from `StateMixin`. They follow PyTorch's rules:

- `state_dict()` maps each parameter's and persistent buffer's path to a detached Tensor that
  SHARES its memory (so `sd[k].copy_(w)` under `no_grad` loads `w` into the model, as
  `from_pretrained` code does); `keep_vars=True` gives the Parameters themselves. A module
  reachable by several paths (tied weights) appears under each.
- `load_state_dict` copies each value into the existing tensor, in place (an optimizer holding
  the parameters keeps training them); `assign=True` puts the given tensors in instead. Here it
  is all or nothing: every entry is checked first and on any error nothing changes.
- Conversions keep the Parameter objects: a float parameter's data is replaced by the converted
  array (its `.grad` too), so optimizers and tied weights still see the same Parameter; buffers
  are replaced by converted tensors.

This module must not register anything (module.py does) nor do maths.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

import numpy as np

from ..creation import from_numpy
from ..errors import DTypeError, ShapeError
from ..state import no_grad
from ..tensor import Tensor
from ..tensor_methods import check_device, device
from .parameter import Parameter


class IncompatibleKeys(NamedTuple):
    """What `load_state_dict` could not match (empty lists: everything matched)."""

    missing_keys: list
    unexpected_keys: list

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _dtype_arg(value: Any) -> np.dtype | None:
    """`value` as a dtype, or None if it does not name one (a device string, a tensor)."""
    if isinstance(value, (Tensor, device)) or value is None:
        return None
    try:
        return np.dtype(value)
    except DTypeError:  # (torch.bfloat16: a dtype NumPy lacks, said clearly)
        raise
    except TypeError:
        return None


class StateMixin:
    """`state_dict`, `load_state_dict`, conversions and `zero_grad` for `Module`."""

    # ------------------------------------------------------------------ state_dict
    def _state_slots(self) -> list[tuple[str, Any, str, bool]]:
        """(key, owning module, attribute, is_parameter) for every entry of `state_dict()`, in
        PyTorch's order: a module's parameters, then its buffers, then each child's entries;
        a shared module under each of its paths."""
        slots = []
        for path, module in self.named_modules(remove_duplicate=False):
            for name in module._parameter_names:
                if getattr(module, name) is not None:
                    slots.append((_join(path, name), module, name, True))
            for name in module._buffer_names:
                if getattr(module, name) is not None and name not in module._non_persistent:
                    slots.append((_join(path, name), module, name, False))
        return slots

    def state_dict(
        self, *args: Any, destination: Any = None, prefix: str = "", keep_vars: bool = False
    ) -> OrderedDict:
        """{path: tensor} for every parameter and persistent buffer, in PyTorch's order and
        naming. Each value is detached and shares the parameter's memory (writing into it
        under `no_grad` writes into the model); `keep_vars=True` gives the tensors themselves.
        `destination` (a dict to fill) and `prefix` (put before every key) as in PyTorch."""
        if args:  # PyTorch's old positional form: (destination, prefix, keep_vars)
            destination, prefix, keep_vars = (*args, prefix, keep_vars)[:3]
        state = OrderedDict() if destination is None else destination
        for key, module, name, _ in self._state_slots():
            tensor = getattr(module, name)
            state[prefix + key] = tensor if keep_vars else tensor.detach()
        return state

    def load_state_dict(
        self, state_dict: Mapping, strict: bool = True, assign: bool = False
    ) -> IncompatibleKeys:
        """Copy the values of `state_dict` (this library's or a PyTorch `state_dict`: tensors,
        or arrays) into the parameters and buffers of the same names, in place, under no_grad;
        with `assign=True` the given tensors become the parameters (keeping each parameter's
        `requires_grad`) and buffers instead. Returns `(missing_keys, unexpected_keys)`.

        All or nothing: every entry is checked first (numbers, of the tensor's shape) and on any
        error nothing changes. With `strict=True` the keys must match too; an error (a
        ValueError that is also PyTorch's RuntimeError) lists every problem.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"{self._label()}.load_state_dict: expected state_dict to be dict-like, got "
                f"{type(state_dict).__name__}"
            )
        slots = self._state_slots()
        own = {key for key, *_ in slots}
        missing = [key for key, *_ in slots if key not in state_dict]
        unexpected = [key for key in state_dict if key not in own]
        problems = []
        if strict and missing:
            problems.append("Missing key(s) in state_dict: " + ", ".join(map(repr, missing)))
        if strict and unexpected:
            listed = ", ".join(map(repr, unexpected))
            problems.append("Unexpected key(s) in state_dict: " + listed)
        values = []
        for key, module, name, is_param in slots:
            if key in state_dict:
                value, problem = _loadable(state_dict[key], getattr(module, name), key)
                if problem:
                    problems.append(problem)
                values.append((module, name, is_param, value))
        if problems:
            hint = "\nPass strict=False to load only the matching keys." if strict else ""
            raise ShapeError(
                f"Error(s) in loading state_dict for {self._label()}:\n\t"
                + "\n\t".join(problems)
                + hint
            )
        with no_grad():
            for module, name, is_param, value in values:
                target = getattr(module, name)
                if not assign:
                    target.copy_(value)
                elif is_param:
                    setattr(module, name, Parameter(value, target.requires_grad))
                else:
                    setattr(module, name, value)
        return IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------------- conversions
    def to(self, *args: Any, **kwargs: Any) -> Any:
        """`to(dtype)`, `to(device)`, `to(device, dtype)`, `to(tensor)` (its dtype) or the same
        as keywords, as PyTorch: a float dtype converts every float parameter and buffer (in
        place: the same Parameter objects); the device must be the CPU. Returns self."""
        dtype = _dtype_arg(kwargs.pop("dtype", None)) if "dtype" in kwargs else None
        check_device(kwargs.pop("device", None))
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"{self._label()}.to(): unexpected arguments {sorted(kwargs)}")
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif _dtype_arg(arg) is not None and not isinstance(arg, bool):
                dtype = _dtype_arg(arg)
            elif not isinstance(arg, bool):  # (non_blocking, positionally)
                check_device(arg)
        if dtype is not None:
            if dtype.kind not in "fc":
                raise TypeError(
                    f"{self._label()}.to(): a Module converts only to a floating point dtype, "
                    f"got {dtype}; convert an integer buffer itself (module.buf = buf.long())"
                )
            self._convert(dtype, floats_only=True)
        return self

    def double(self) -> Any:
        """Float parameters and buffers to float64; returns self."""
        return self._convert(np.dtype(np.float64), floats_only=True)

    def float(self) -> Any:
        """Float parameters and buffers to float32; returns self."""
        return self._convert(np.dtype(np.float32), floats_only=True)

    def half(self) -> Any:
        """Float parameters and buffers to float16; returns self."""
        return self._convert(np.dtype(np.float16), floats_only=True)

    def type(self, dst_type: Any) -> Any:
        """EVERY parameter and buffer to `dst_type` (integer ones too, as PyTorch); returns
        self."""
        return self._convert(np.dtype(dst_type), floats_only=False)

    def cpu(self) -> Any:
        """Self: everything is on the CPU already."""
        return self

    def cuda(self, device: Any = None) -> Any:
        check_device("cuda")  # (a clear error: this package runs on the CPU)

    def _convert(self, dtype: np.dtype, floats_only: bool) -> Any:
        """Every parameter (same object, new data; its grad too) and buffer (a new tensor) of
        this module and its descendants to `dtype`; with `floats_only`, only float ones."""
        for _, module in self.named_modules():
            for name in module._parameter_names:
                param = getattr(module, name)
                if param is not None and (param.dtype.kind == "f" or not floats_only):
                    _convert_parameter(module, name, param, dtype)
            for name in module._buffer_names:
                buffer = getattr(module, name)
                if buffer is not None and buffer.dtype != dtype:
                    if buffer.dtype.kind == "f" or not floats_only:
                        converted = from_numpy(buffer.numpy().astype(dtype))
                        object.__setattr__(module, name, converted)
        return self

    # ------------------------------------------------------------------- gradients
    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's `.grad`: to None (PyTorch's default), or with
        `set_to_none=False` to zeros, in place."""
        for param in self.parameters():
            grad = param._grad
            if grad is None:
                continue
            if set_to_none:
                param.grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()


def _convert_parameter(module: Any, name: str, param: Parameter, dtype: np.dtype) -> None:
    """`param.data` (and `param.grad.data`) converted to `dtype`, the objects kept."""
    if param.dtype == dtype:
        return
    if param.requires_grad and dtype.kind != "f":
        raise DTypeError(
            f"{module._label()}: parameter {name!r} requires grad, so it cannot become {dtype} "
            "(only float tensors take gradients); freeze it first (requires_grad_(False))"
        )
    grad, param._grad = param._grad, None
    param.data = param.numpy().astype(dtype)
    if grad is not None:
        grad.data = grad.numpy().astype(dtype)
        param.grad = grad


def _loadable(value: Any, target: Tensor, key: str) -> tuple[Any, str | None]:
    """(value as a tensor, None) if it can be loaded into `target`, else (None, the problem)."""
    if not isinstance(value, Tensor):
        try:
            array = np.asarray(value)
        except (ValueError, TypeError) as err:
            return None, f"{key}: cannot be read as an array ({err}); give a tensor"
        if array.dtype.kind not in "fiub":
            return None, f"{key}: holds dtype {array.dtype}, not numbers"
        value = from_numpy(array)
    if value.shape != target.shape:
        return None, (
            f"size mismatch for {key}: copying a param with shape {tuple(value.shape)} from "
            f"checkpoint, the shape in current model is {tuple(target.shape)}"
        )
    return value, None
