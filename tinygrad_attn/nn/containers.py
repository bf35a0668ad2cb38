"""PyTorch's containers: `Sequential`, `ModuleList`, `ModuleDict`, `ParameterList`,
`ParameterDict`, with PyTorch's indexing, slicing and editing.

A list container names its children "0", "1", ... (so `blocks.0.attn...`); deleting or inserting
renumbers them, as PyTorch does. Slicing gives a container of the same class holding the same
objects (a `Sequential` keeps their names, a `ModuleList` renumbers): the objects stay where
they are, so their names (`Tensor.name`, module paths) are not changed by the slice. This module
registers through `Module`'s own methods and does no maths.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from ..tensor import Tensor
from .module import Module
from .parameter import Parameter

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]


def _adopt(container: Module, name: str, member: Any, registry: list) -> None:
    """Hold `member` under `name` without renaming it: it still lives where it was made (the
    containers a slice or `+` makes)."""
    registry.append(name)
    object.__setattr__(container, name, member)


def _position(container: Any, index: Any) -> int:
    """`index` (an int, negative counting from the end) as a position in `container`."""
    index = operator.index(index)
    size = len(container)
    if not -size <= index < size:
        raise IndexError(f"{type(container).__name__}: index {index} is out of range (size {size})")
    return index % size


class ModuleList(Module):
    """A list of modules (children named "0", "1", ...) with no forward of its own."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def _modules_list(self) -> list:
        return [getattr(self, name) for name in self._child_names]

    def _check(self, module: Any, index: int) -> None:
        if not isinstance(module, Module):
            raise TypeError(
                f"{type(self).__name__}: item {index} must be a Module, got {type(module).__name__}"
            )

    def _renumber(self, modules: list) -> None:
        """Make `modules` the children, named "0", "1", ... (renamed after this container)."""
        for name in list(self._child_names):
            delattr(self, name)
        for i, module in enumerate(modules):
            setattr(self, str(i), module)

    def append(self, module: Module) -> ModuleList:
        """Add `module` as the next child."""
        self._check(module, len(self))
        setattr(self, str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each of `modules`."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"{type(self).__name__}.extend: expected an iterable of Modules")
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put `module` before position `index`; the later children are renumbered."""
        self._check(module, index)
        modules = self._modules_list()
        modules.insert(index, module)
        self._renumber(modules)

    def pop(self, key: int = -1) -> Module:
        """Remove and return the child at position `key`."""
        module = self[key]
        del self[key]
        return module

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            part = type(self).__new__(type(self))
            ModuleList.__init__(part)
            for i, module in enumerate(self._modules_list()[index]):
                _adopt(part, str(i), module, part._child_names)
            return part
        return getattr(self, self._child_names[_position(self, index)])

    def __setitem__(self, index: int, module: Module) -> None:
        self._check(module, index)
        setattr(self, self._child_names[_position(self, index)], module)

    def __delitem__(self, index: int | slice) -> None:
        modules = self._modules_list()
        if isinstance(index, slice):
            del modules[index]
        else:
            del modules[_position(self, index)]
        self._renumber(modules)

    def __len__(self) -> int:
        return len(self._child_names)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._modules_list())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate([*self, *other]):
            _adopt(combined, str(i), module, combined._child_names)
        return combined


class Sequential(ModuleList):
    """Modules applied one after another: `Sequential(a, b, c)` (children "0", "1", "2") or
    `Sequential(OrderedDict(name=module, ...))` (children by those names)."""

    def __init__(self, *modules: Any) -> None:
        Module.__init__(self)
        if len(modules) == 1 and isinstance(modules[0], Mapping):
            for name, module in modules[0].items():
                self._check(module, name)
                self.add_module(name, module)
        else:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):  # the same names, as PyTorch's
            part = Sequential()
            for name in self._child_names[index]:
                _adopt(part, name, getattr(self, name), part._child_names)
            return part
        return super().__getitem__(index)

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise TypeError(f"Sequential + {type(other).__name__}: add another Sequential")
        combined = Sequential()
        for i, module in enumerate([*self, *other]):
            _adopt(combined, str(i), module, combined._child_names)
        return combined

    def __mul__(self, times: int) -> Sequential:
        if not isinstance(times, int) or isinstance(times, bool) or times <= 0:
            raise ValueError(f"Sequential * {times!r}: multiply by a positive int")
        combined = Sequential()
        for i, module in enumerate(list(self) * times):
            _adopt(combined, str(i), module, combined._child_names)
        return combined

    def forward(self, x: Any) -> Any:
        for module in self:
            x = module(x)
        return x


class ModuleDict(Module):
    """A dict of modules, children named by their keys (`transformer.wte`), as PyTorch's;
    keys are reachable as attributes too (`self.transformer.wte`)."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules: Any) -> None:
        """Add (or replace) the children from a dict or from (key, module) pairs."""
        items = modules.items() if isinstance(modules, Mapping) else modules
        for key, module in items:
            self[key] = module

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(module, Module):
            raise TypeError(
                f"{type(self).__name__}: {key!r} must be a Module, got {type(module).__name__}"
            )
        self.add_module(key, module)

    def __getitem__(self, key: str) -> Module:
        if key not in self._child_names:
            raise KeyError(f"{self._label()} has no key {key!r}; it has {self._child_names}")
        return getattr(self, key)

    def __delitem__(self, key: str) -> None:
        self[key]  # KeyError naming the keys if absent
        delattr(self, key)

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def clear(self) -> None:
        for key in list(self._child_names):
            delattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in self._child_names

    def __len__(self) -> int:
        return len(self._child_names)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._child_names))

    def keys(self) -> list[str]:
        return list(self._child_names)

    def values(self) -> list[Module]:
        return [getattr(self, key) for key in self._child_names]

    def items(self) -> list[tuple[str, Module]]:
        return [(key, getattr(self, key)) for key in self._child_names]


def _as_parameter(value: Any) -> Any:
    """A Tensor that is not a Parameter becomes one sharing its memory (as PyTorch's
    containers do); a Parameter, or any other object, stays as it is."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _describe(value: Any) -> str:
    if isinstance(value, Parameter):
        size = "x".join(map(str, value.shape))
        return f"Parameter containing: [{value.dtype} of size {size}]"
    return repr(value)


class ParameterList(Module):
    """A list of parameters (registered as "0", "1", ...): a Tensor put in becomes an
    `nn.Parameter` sharing its memory, as PyTorch's."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self.extend(values)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            part = ParameterList()
            for i, value in enumerate(list(self)[index]):
                _adopt(part, str(i), value, part._parameter_names)
                object.__setattr__(part, "_size", i + 1)
            return part
        return getattr(self, str(_position(self, index)))

    def __setitem__(self, index: int, value: Any) -> None:
        setattr(self, str(_position(self, index)), _as_parameter(value))

    def __iter__(self) -> Iterator[Any]:
        return (getattr(self, str(i)) for i in range(self._size))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        """Add `value` at the end (a Tensor as a Parameter)."""
        object.__setattr__(self, "_size", self._size + 1)
        self[self._size - 1] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"  ({i}): {_describe(value)}" for i, value in enumerate(self))

    def __repr__(self) -> str:
        body = self.extra_repr()
        return f"ParameterList(\n{body}\n)" if body else "ParameterList()"


class ParameterDict(Module):
    """A dict of parameters registered under their keys: a Tensor put in becomes an
    `nn.Parameter` sharing its memory, as PyTorch's."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", [])
        if parameters is not None:
            self.update(parameters)

    def __setitem__(self, key: str, value: Any) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict: keys must be str, got {type(key).__name__}")
        if key not in self._keys:
            self._check_new_name(key, "parameter", self._parameter_names + self._keys)
            self._keys.append(key)
        setattr(self, key, _as_parameter(value))

    def __getitem__(self, key: str) -> Any:
        if key not in self._keys:
            raise KeyError(f"ParameterDict has no key {key!r}; it has {self._keys}")
        return getattr(self, key)

    def __delitem__(self, key: str) -> None:
        self[key]  # KeyError naming the keys if absent
        self._keys.remove(key)
        delattr(self, key)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._keys))

    def keys(self) -> list[str]:
        return list(self._keys)

    def values(self) -> list[Any]:
        return [getattr(self, key) for key in self._keys]

    def items(self) -> list[tuple[str, Any]]:
        return [(key, getattr(self, key)) for key in self._keys]

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self._keys else default

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def update(self, values: Any) -> None:
        """Add (or replace) entries from a dict or from (key, value) pairs."""
        items = values.items() if isinstance(values, Mapping) else values
        for key, value in items:
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({key}): {_describe(value)}" for key, value in self.items())

    def __repr__(self) -> str:
        body = self.extra_repr()
        return f"ParameterDict(\n{body}\n)" if body else "ParameterDict()"
