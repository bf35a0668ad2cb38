"""Module: the bookkeeping of a layer — its parameters, its sub-modules, their names.

Assigning an attribute does the registration, as in PyTorch: a leaf Tensor that requires grad
becomes a parameter, a Module becomes a child. Parameters are NAMED (`Tensor.name`) as soon as
they are assigned, with their full path from the outermost module (`blocks.0.attn.q_proj.weight`);
placing a module inside another renames its whole subtree. Calling a module runs `forward` with
the module's path pushed on `function.observers.scope`, so every graph node made inside knows
which layer made it (the graph renderer draws one cluster per layer).

The containers `Sequential` and `ModuleList` live here too. This module must not do maths: the
layers do, through Tensor ops and `functional`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ..state import observers
from ..tensor import Tensor
from ..tensor_methods import check_device, device


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


class ModulePath(str):
    """A module's path ("blocks.0.attn"), which the nodes made inside it keep as `node.scope`.
    It also carries the module's type name (`module_type`) and the path of the module that
    holds it (`parent`: None at the top), so that a picture names every module box
    (`blocks.0 · TransformerBlock`) without being given the model."""

    module_type: str
    parent: ModulePath | None


def _path_of(module: Module, path: str, parent: ModulePath | None) -> ModulePath:
    scope = ModulePath(path)
    scope.module_type, scope.parent = type(module).__name__, parent
    return scope


class Parameter(Tensor):
    """A leaf Tensor meant to be a module's parameter (`nn.Parameter(torch.ones(4))`).

    As in PyTorch it requires grad by default and is registered as a parameter when assigned to
    a module even if frozen (`requires_grad=False`). Unlike PyTorch it copies its data (a
    Tensor's array is not shared), as `Tensor(...)` does.
    """

    def __init__(self, data: Any = None, requires_grad: bool = True) -> None:
        if data is None:
            data = np.empty(0, dtype=np.float32)
        super().__init__(data._data if isinstance(data, Tensor) else data, requires_grad)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


def _is_parameter(value: Any) -> bool:
    if isinstance(value, Parameter):
        return True
    return isinstance(value, Tensor) and value.requires_grad and value.is_leaf


def check_size(module: Module, **sizes: int) -> None:
    """Raise unless every size is a positive int; the message names the module and the size."""
    for what, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(
                f"{type(module).__name__}: {what} must be an int, got {type(value).__name__}"
            )
        if value <= 0:
            raise ValueError(f"{type(module).__name__}: {what} must be positive, got {value}")


class IncompatibleKeys(NamedTuple):
    """What `load_state_dict(strict=False)` could not match."""

    missing_keys: list
    unexpected_keys: list


class Module:
    """Base class of every layer. Subclasses call `super().__init__()` first, assign their
    parameters and sub-modules as attributes, and define `forward`."""

    training: bool

    def __init__(self) -> None:
        # Names of the attributes that are parameters / children, in assignment order; the
        # objects themselves stay ordinary attributes (visible in a debugger's variables view).
        object.__setattr__(self, "_parameter_names", [])
        object.__setattr__(self, "_child_names", [])
        object.__setattr__(self, "_buffer_names", [])  # register_buffer: state, not trained
        object.__setattr__(self, "_non_persistent", set())  # buffers left out of state_dict
        object.__setattr__(self, "_path", _path_of(self, "", None))
        object.__setattr__(self, "training", True)

    # ----------------------------------------------------------------- registration
    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameter_names" not in self.__dict__:
            raise RuntimeError(
                f"{type(self).__name__}: assigned {name!r} before Module.__init__() ran; call "
                "super().__init__() first in your __init__"
            )
        params, children = self._parameter_names, self._child_names
        if name in self.__dict__.get("_buffer_names", ()):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"{self._label()}: buffer {name!r} must be a Tensor or None, got "
                    f"{type(value).__name__}"
                )
            object.__setattr__(self, name, value)
            return
        kind = params if _is_parameter(value) else children if isinstance(value, Module) else None
        for names in (params, children):
            if names is not kind and name in names:
                names.remove(name)  # e.g. a parameter replaced by None
        if kind is not None and name not in kind:
            kind.append(name)
        if kind is params:
            value.name = _join(self._path, name)
        elif kind is children:
            value._rename(_join(self._path, name), self._path)
        object.__setattr__(self, name, value)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Keep `tensor` as state that is not trained (a causal mask, running statistics):
        an attribute, in `state_dict()` (unless `persistent=False`), never in `parameters()`."""
        if not isinstance(name, str) or not name or "." in name:
            raise ValueError(f"{self._label()}.register_buffer: bad name {name!r}")
        if name in self._parameter_names or name in self._child_names:
            raise KeyError(
                f"{self._label()}.register_buffer: {name!r} is already a parameter or module"
            )
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"{self._label()}.register_buffer: {name!r} must be a Tensor or None, got "
                f"{type(tensor).__name__}"
            )
        if name not in self._buffer_names:
            self._buffer_names.append(name)
        if not persistent:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def __delattr__(self, name: str) -> None:
        for names in (self._parameter_names, self._child_names, self._buffer_names):
            if name in names:
                names.remove(name)
        object.__delattr__(self, name)

    def _rename(self, path: str, parent: ModulePath | None) -> None:
        """Give this module the full path `path` (inside `parent`) and name its whole subtree
        after it."""
        object.__setattr__(self, "_path", _path_of(self, path, parent))
        for name in self._parameter_names:
            getattr(self, name).name = _join(path, name)
        for name in self._child_names:
            getattr(self, name)._rename(_join(path, name), self._path)

    def __setstate__(self, state: dict) -> None:
        # Unpickled (pickle, copy.deepcopy, ta.load(weights_only=False)): a checkpoint writes
        # parameters as PyTorch does, without our names, so name them again from this module's
        # path, as assignment does.
        self.__dict__.update(state)
        for name in self._parameter_names:
            param = getattr(self, name)
            if param is not None:
                param.name = _join(self._path, name)

    @property
    def path(self) -> str:
        """The full path from the outermost module ("" for the outermost one itself)."""
        return self._path

    def _label(self) -> str:
        """How error messages name this module: `Linear 'attn.q_proj'` (or just `Linear`)."""
        return f"{type(self).__name__} {self._path!r}" if self._path else type(self).__name__

    def _check_width(
        self, x: Tensor, width: int, what: str = "input", sequence: bool = False
    ) -> None:
        """A ValueError naming this module unless `x` is a Tensor of shape (..., width), or
        (..., T, width) with `sequence=True`."""
        if not isinstance(x, Tensor):
            raise TypeError(f"{self._label()}: {what} must be a Tensor, got {type(x).__name__}")
        if x.ndim < (2 if sequence else 1) or x.shape[-1] != width:
            expected = f"(..., T, {width})" if sequence else f"(..., {width})"
            raise ValueError(
                f"{self._label()}: expected {what} of shape {expected}, got shape {x.shape}"
            )

    # ---------------------------------------------------------------------- calling
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        observers.push_scope(self._path)  # (the nodes made inside keep it: `node.scope`)
        try:
            return self.forward(*args, **kwargs)
        finally:
            observers.pop_scope()

    # -------------------------------------------------------------------- traversal
    def children(self) -> Iterator[Module]:
        """The direct sub-modules, in assignment order (each once)."""
        seen: set = set()
        for name in self._child_names:
            child = getattr(self, name)
            if id(child) not in seen:
                seen.add(id(child))
                yield child

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(relative path, module) for this module and every descendant, each once."""
        seen: set = set()
        stack = [(prefix, self)]
        while stack:
            path, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield path, module
            stack.extend(
                (_join(path, name), getattr(module, name)) for name in reversed(module._child_names)
            )

    def modules(self) -> Iterator[Module]:
        """This module and every descendant, each once."""
        for _, module in self.named_modules():
            yield module

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(path relative to this module, parameter) for every parameter, each tensor once
        (tied weights under their first name) unless `remove_duplicate=False`."""
        seen: set = set()
        modules = self._all_modules(prefix) if recurse else [(prefix, self)]
        for path, module in modules:
            for name in module._parameter_names:
                param = getattr(module, name)
                if param is None or (remove_duplicate and id(param) in seen):
                    continue
                seen.add(id(param))
                yield _join(path, name), param

    def _all_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(path, module) under every path it is reachable by (a shared module more than once)."""
        stack = [(prefix, self)]
        while stack:
            path, module = stack.pop()
            yield path, module
            stack.extend(
                (_join(path, name), getattr(module, name)) for name in reversed(module._child_names)
            )

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        """(path, buffer) for every buffer registered with `register_buffer`."""
        for path, module in self.named_modules(prefix):
            for name in module._buffer_names:
                buffer = getattr(module, name)
                if buffer is not None:
                    yield _join(path, name), buffer

    def buffers(self) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers():
            yield buffer

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set = set()
        for name in self._child_names:
            child = getattr(self, name)
            if id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def apply(self, fn: Any) -> Module:
        """Call `fn(module)` on every sub-module (children first) and then on this one, as
        PyTorch's `Module.apply` (e.g. a weight-initialisation function); returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def parameters(self) -> Iterator[Tensor]:
        """Every parameter (each tensor once), for an optimizer: `Adam(model.parameters())`."""
        for _, param in self.named_parameters():
            yield param

    def get_submodule(self, target: str) -> Module:
        """The descendant at relative path `target` ("" is this module)."""
        module = self
        for part in target.split(".") if target else ():
            if part not in module._child_names:
                raise AttributeError(
                    f"{module._label()} has no sub-module {part!r} (looking up {target!r}); it "
                    f"has {module._child_names}"
                )
            module = getattr(module, part)
        return module

    # ------------------------------------------------------------------------ state
    def zero_grad(self) -> None:
        """Set every parameter's `.grad` to None (PyTorch's default, `set_to_none=True`)."""
        for param in self.parameters():
            param.grad = None

    def train(self, mode: bool = True) -> Module:
        """Set `training` on this module and every descendant (Dropout reads it)."""
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """`model.to("cpu")` or `model.to(dtype)`: the device is checked (CPU only), a float
        dtype converts every parameter and float buffer in place; returns self."""
        dtype = kwargs.pop("dtype", None)
        check_device(kwargs.pop("device", None))
        for arg in args:
            if isinstance(arg, (str, device)):
                check_device(arg)
            else:
                dtype = arg
        if kwargs:
            raise TypeError(f"{self._label()}.to(): unexpected arguments {sorted(kwargs)}")
        if dtype is not None:
            dtype = np.dtype(dtype)
            for tensor in list(self.parameters()) + list(self.buffers()):
                if tensor.dtype.kind == "f" and tensor.dtype != dtype:
                    tensor.data = tensor._data.astype(dtype)
                    tensor.grad = None
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (False) or unfreeze every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def eval(self) -> Module:
        """`train(False)`."""
        return self.train(False)

    def state_dict(self) -> dict[str, np.ndarray]:
        """{name: a copy of the array} for every parameter and persistent buffer, in PyTorch's
        order and naming; a tied weight appears under each of its names (as in PyTorch)."""
        state = {}
        for path, module in self._all_modules():
            for name in module._parameter_names:
                param = getattr(module, name)
                if param is not None:
                    state[_join(path, name)] = param._data.copy()
            for name in module._buffer_names:
                buffer = getattr(module, name)
                if buffer is not None and name not in module._non_persistent:
                    state[_join(path, name)] = buffer._data.copy()
        return state

    def _state_tensors(self) -> dict[str, Tensor]:
        """The tensors `state_dict()` copies, by the same names."""
        tensors = {}
        for path, module in self._all_modules():
            for name in module._parameter_names + module._buffer_names:
                tensor = getattr(module, name)
                if tensor is not None and name not in module._non_persistent:
                    tensors[_join(path, name)] = tensor
        return tensors

    def load_state_dict(self, state: dict, strict: bool = True) -> IncompatibleKeys:
        """Copy arrays from `state` (this library's or a PyTorch `state_dict`) into the
        parameters and buffers of the same names. All or nothing: every entry is checked first
        (a number array of the right shape), and on any error nothing changes.

        With `strict=True` the keys must match too (ValueError naming the missing and the
        unexpected keys); with `strict=False` the others are loaded and the mismatches returned.
        """
        label = f"{self._label()}.load_state_dict"
        if not hasattr(state, "keys") or not hasattr(state, "__getitem__"):
            raise TypeError(
                f"{label}: expected a dict of name -> array, got {type(state).__name__}"
            )
        own = self._state_tensors()
        missing = [key for key in own if key not in state]
        unexpected = [key for key in state if key not in own]
        problems = []
        if strict and missing:
            problems.append(f"missing keys: {missing}")
        if strict and unexpected:
            problems.append(f"unexpected keys: {unexpected}")
        arrays = {}
        for key, target in own.items():
            if key not in state:
                continue
            array, problem = _loadable(state[key], target)
            if problem:
                problems.append(f"{key}: {problem}")
            arrays[key] = array
        if problems:
            hint = " Pass strict=False to load only the matching keys." if strict else ""
            raise ValueError(f"{label}: " + "; ".join(problems) + "." + hint)
        for key, array in arrays.items():
            # A new array rather than writing in place: a live graph may hold the old one.
            own[key].data = np.array(array, dtype=own[key].dtype)
        return IncompatibleKeys(missing, unexpected)

    # ------------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The arguments shown between the parentheses of this module's repr."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        if not self._child_names:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + [
            f"({name}): " + repr(getattr(self, name)) for name in self._child_names
        ]
        body = "\n".join("  " + line.replace("\n", "\n  ") for line in lines)
        return f"{type(self).__name__}(\n{body}\n)"


def _loadable(value: Any, target: Tensor) -> tuple[Any, str | None]:
    """(array, None) if `value` can be loaded into `target`, else (None, what is wrong)."""
    if isinstance(value, Tensor):
        value = value._data
    try:
        array = np.asarray(value)
    except (ValueError, TypeError) as err:
        return None, f"cannot be read as an array ({err}); give an ndarray"
    if array.dtype.kind not in "fiub":
        return None, f"holds dtype {array.dtype}, not numbers"
    if array.dtype.kind == "f" and target.dtype.kind in "iub":
        return None, f"is a float array but the buffer holds {target.dtype}"
    if array.shape != target.shape:
        return None, f"expected shape {target.shape}, got {array.shape}"
    return array, None


class ModuleList(Module):
    """A list of modules (children named "0", "1", ...) with no forward of its own."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        """Add `module` as the next child."""
        index = len(self._child_names)
        if not isinstance(module, Module):
            raise TypeError(
                f"{type(self).__name__}: item {index} must be a Module, got {type(module).__name__}"
            )
        setattr(self, str(index), module)
        return self

    def __getitem__(self, index: int) -> Module:
        return getattr(self, self._child_names[index])

    def __len__(self) -> int:
        return len(self._child_names)

    def __iter__(self) -> Iterator[Module]:
        return (getattr(self, name) for name in self._child_names)

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append each of `modules`."""
        for module in modules:
            self.append(module)
        return self


class ModuleDict(Module):
    """A dict of modules, children named by their keys (`transformer.wte`), as PyTorch's;
    keys are reachable as attributes too (`self.transformer.wte`)."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules: Any) -> None:
        """Add (or replace) the children from a dict or from (key, module) pairs."""
        items = modules.items() if hasattr(modules, "items") else modules
        for key, module in items:
            self[key] = module

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(key, str) or not key.isidentifier():
            raise KeyError(f"{type(self).__name__}: keys must be identifiers, got {key!r}")
        if not isinstance(module, Module):
            raise TypeError(
                f"{type(self).__name__}: {key!r} must be a Module, got {type(module).__name__}"
            )
        setattr(self, key, module)

    def __getitem__(self, key: str) -> Module:
        if key not in self._child_names:
            raise KeyError(f"{self._label()} has no key {key!r}; it has {self._child_names}")
        return getattr(self, key)

    def __delitem__(self, key: str) -> None:
        self[key]  # KeyError naming the keys if absent
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


class Sequential(ModuleList):
    """Modules applied one after another; children are named "0", "1", ..."""

    def __init__(self, *modules: Module) -> None:
        super().__init__(modules)

    def forward(self, x: Any) -> Any:
        for module in self:
            x = module(x)
        return x


def functional_call(module: Module, parameters: dict[str, Tensor], *args: Any, **kwargs: Any):
    """`module(*args, **kwargs)` with the named parameters replaced by the given tensors for
    this one call (as `torch.func.functional_call`); the originals are put back afterwards.

    Keys are names from `module.named_parameters()`. Useful to gradcheck a module: pass its
    parameters as gradcheck inputs and call the module through this.
    """
    swapped = []
    try:
        for name, tensor in parameters.items():
            owner_path, _, attr = name.rpartition(".")
            owner = module.get_submodule(owner_path)
            if attr not in owner._parameter_names:
                raise KeyError(f"functional_call: {module._label()} has no parameter {name!r}")
            swapped.append((owner, attr, getattr(owner, attr)))
            # Bypass registration: the registry keeps its names and order, only the object changes.
            object.__setattr__(owner, attr, tensor)
        return module(*args, **kwargs)
    finally:
        for owner, attr, original in reversed(swapped):
            object.__setattr__(owner, attr, original)
