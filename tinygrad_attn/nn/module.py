"""Module: the bookkeeping of a layer — its parameters, buffers and sub-modules, their names.

Assigning an attribute does the registration, by PyTorch's rules: an `nn.Parameter` becomes a
parameter, a `Module` a child, an `nn.Buffer` a buffer (as `register_buffer`); anything else,
a plain Tensor that requires grad included, is an ordinary attribute. A slot keeps its kind:
a parameter's attribute takes only a Parameter or None (a plain Tensor is PyTorch's TypeError),
a child's only a Module or None, a buffer's only a Tensor or None. Parameters are NAMED
(`Tensor.name`) as soon as they are assigned, with their full path from the outermost module
(`blocks.0.attn.q_proj.weight`); placing a module inside another renames its whole subtree.
Calling a module runs its forward hooks and `forward` with the module's path pushed on
`observers.scope`, so every graph node made inside knows which layer made it (the graph renderer
draws one cluster per layer).

The state (`state_dict`, `load_state_dict`, dtype conversion, `zero_grad`) is in
module_state.py and the hooks in module_hooks.py, both mixed into `Module`; the containers are
in containers.py. This module must not do maths: the layers do, through Tensor ops and
`functional`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..state import observers
from ..tensor import Tensor
from .module_hooks import HooksMixin
from .module_state import IncompatibleKeys, StateMixin
from .parameter import Buffer, Parameter

__all__ = ["IncompatibleKeys", "Module", "Parameter", "check_size", "functional_call"]


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


def _kind(value: Any) -> str:
    """How an error message names a value's type: `Tensor (float32)`, `int`."""
    if isinstance(value, Tensor):
        return f"{type(value).__name__} ({value.dtype})"
    return type(value).__name__


def check_size(module: Module, **sizes: int) -> None:
    """Raise unless every size is a positive int; the message names the module and the size."""
    for what, value in sizes.items():
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise TypeError(
                f"{type(module).__name__}: {what} must be an int, got {type(value).__name__}"
            )
        if value <= 0:
            raise ValueError(f"{type(module).__name__}: {what} must be positive, got {value}")


class Module(StateMixin, HooksMixin):
    """Base class of every layer. Subclasses call `super().__init__()` first, assign their
    parameters (`nn.Parameter`) and sub-modules as attributes, and define `forward`."""

    training: bool

    def __init__(self) -> None:
        # Names of the attributes that are parameters / children / buffers, in assignment
        # order; the objects themselves stay ordinary attributes (visible in a debugger's
        # variables view). A slot set to None keeps its name (and its kind), as in PyTorch.
        object.__setattr__(self, "_parameter_names", [])
        object.__setattr__(self, "_child_names", [])
        object.__setattr__(self, "_buffer_names", [])
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
        if isinstance(value, Parameter):
            self._register(name, self._parameter_names)
            self._set_parameter(name, value)
        elif name in self._parameter_names:
            if value is not None:
                raise TypeError(
                    f"{self._label()}: cannot assign {_kind(value)!r} as parameter {name!r} "
                    f"(nn.Parameter or None expected). Wrap it (self.{name} = "
                    f"nn.Parameter(value)), or write into the parameter under no_grad "
                    f"(self.{name}.copy_(value))"
                )
            object.__setattr__(self, name, None)
        elif isinstance(value, Module):
            self._register(name, self._child_names)
            self._set_child(name, value)
        elif name in self._child_names:
            if value is not None:
                raise TypeError(
                    f"{self._label()}: cannot assign {_kind(value)!r} as child module {name!r} "
                    "(nn.Module or None expected)"
                )
            object.__setattr__(self, name, None)
        elif isinstance(value, Buffer):
            self._forget(name)
            self.register_buffer(name, value.detach(), value.persistent)
        elif name in self._buffer_names:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"{self._label()}: cannot assign {_kind(value)!r} as buffer {name!r} "
                    "(nn.Buffer, Tensor or None expected)"
                )
            object.__setattr__(self, name, value)
        else:
            object.__setattr__(self, name, value)

    def _register(self, name: str, registry: list) -> None:
        """Make `name` an entry of `registry` only (a replaced entry keeps its place)."""
        for names in (self._parameter_names, self._child_names, self._buffer_names):
            if names is not registry and name in names:
                names.remove(name)
        self._non_persistent.discard(name)
        if name not in registry:
            registry.append(name)

    def _forget(self, name: str) -> None:
        """Drop `name` from every registry (it is about to be registered anew)."""
        for names in (self._parameter_names, self._child_names, self._buffer_names):
            if name in names:
                names.remove(name)
        self._non_persistent.discard(name)

    def _set_parameter(self, name: str, param: Parameter | None) -> None:
        if param is not None:
            param.name = _join(self._path, name)
        object.__setattr__(self, name, param)

    def _set_child(self, name: str, module: Module | None) -> None:
        if module is not None:
            module._rename(_join(self._path, name), self._path)
        object.__setattr__(self, name, module)

    def _check_new_name(self, name: Any, kind: str, registered: list) -> None:
        """PyTorch's checks of a name given to register_parameter / register_buffer /
        add_module: a str, no ".", not empty, not already another attribute."""
        if "_parameter_names" not in self.__dict__:
            raise AttributeError(
                f"cannot register a {kind} before Module.__init__() ran; call "
                "super().__init__() first in your __init__"
            )
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registered:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add `param` (an `nn.Parameter`, or None for an empty slot) as parameter `name`."""
        self._check_new_name(name, "parameter", self._parameter_names)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"{self._label()}.register_parameter: cannot assign {_kind(param)!r} object to "
                f"parameter {name!r} (nn.Parameter or None required); wrap it: "
                "nn.Parameter(tensor)"
            )
        if name not in self._parameter_names:
            self._parameter_names.append(name)
        self._set_parameter(name, param)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Keep `tensor` as state that is not trained (a causal mask, running statistics):
        an attribute, in `state_dict()` (unless `persistent=False`), never in `parameters()`."""
        self._check_new_name(name, "buffer", self._buffer_names)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"{self._label()}.register_buffer: cannot assign {_kind(tensor)!r} object to "
                f"buffer {name!r} (Tensor or None required)"
            )
        if name not in self._buffer_names:
            self._buffer_names.append(name)
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add `module` (or None, an empty slot) as child `name`, as assigning it does."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {type(module).__name__} is not a Module subclass")
        self._check_new_name(name, "module", self._child_names)
        if name not in self._child_names:
            self._child_names.append(name)
        self._set_child(name, module)

    def register_module(self, name: str, module: Module | None) -> None:
        """`add_module` (PyTorch's other name for it)."""
        self.add_module(name, module)

    def __delattr__(self, name: str) -> None:
        self._forget(name)
        object.__delattr__(self, name)

    def _rename(self, path: str, parent: ModulePath | None) -> None:
        """Give this module the full path `path` (inside `parent`) and name its whole subtree
        after it."""
        object.__setattr__(self, "_path", _path_of(self, path, parent))
        for name in self._parameter_names:
            param = getattr(self, name)
            if param is not None:
                param.name = _join(path, name)
        for name in self._child_names:
            child = getattr(self, name)
            if child is not None:
                child._rename(_join(path, name), self._path)

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

    def _get_name(self) -> str:
        return type(self).__name__

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
            if self._hooks_of is None:  # (no hook registered: the plain call)
                return self.forward(*args, **kwargs)
            return self._call_with_hooks(args, kwargs)  # (module_hooks.py)
        finally:
            observers.pop_scope()

    # -------------------------------------------------------------------- traversal
    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct sub-modules, in assignment order (each once)."""
        seen: set = set()
        for name in self._child_names:
            child = getattr(self, name)
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """The direct sub-modules, in assignment order (each once)."""
        for _, child in self.named_children():
            yield child

    def named_modules(
        self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(path relative to this module, module) for this module and every descendant, in
        PyTorch's order (a module, then each child's subtree); a module reachable by several
        paths once, under its first, unless `remove_duplicate=False`."""
        seen = memo if memo is not None else set()
        stack = [(prefix, self)]
        while stack:
            path, module = stack.pop()
            if remove_duplicate:
                if module in seen:
                    continue
                seen.add(module)
            yield path, module
            for name in reversed(module._child_names):
                child = getattr(module, name)
                if child is not None:
                    stack.append((_join(path, name), child))

    def modules(self) -> Iterator[Module]:
        """This module and every descendant, each once."""
        for _, module in self.named_modules():
            yield module

    def _named_members(
        self, names_of: Callable, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        """(path, object) for the members `names_of(module)` names, over this module (and its
        descendants with `recurse`); each object once unless `remove_duplicate=False`."""
        seen: set = set()
        if recurse:
            modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
        else:
            modules = [(prefix, self)]
        for path, module in modules:
            for name in names_of(module):
                member = getattr(module, name)
                if member is None or (remove_duplicate and id(member) in seen):
                    continue
                seen.add(id(member))
                yield _join(path, name), member

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(path relative to this module, parameter) for every parameter (only this module's
        own with `recurse=False`), each tensor once (tied weights under their first name)
        unless `remove_duplicate=False`."""
        return self._named_members(lambda m: m._parameter_names, prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """Every parameter (each tensor once), for an optimizer: `Adam(model.parameters())`."""
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(path, buffer) for every buffer (`register_buffer`, `nn.Buffer`)."""
        return self._named_members(lambda m: m._buffer_names, prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn(module)` on every sub-module (children first) and then on this one, as
        PyTorch's `Module.apply` (e.g. a weight-initialisation function); returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def get_submodule(self, target: str) -> Module:
        """The descendant at relative path `target` ("" is this module)."""
        module = self
        for part in target.split(".") if target else ():
            if not hasattr(module, part):
                raise AttributeError(
                    f"{module._label()} has no attribute `{part}` (looking up {target!r}); its "
                    f"sub-modules are {[n for n, _ in module.named_children()]}"
                )
            if part not in module._child_names or getattr(module, part) is None:
                raise AttributeError(f"`{part}` is not an nn.Module (looking up {target!r})")
            module = getattr(module, part)
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at relative path `target` ("blocks.0.attn.q_proj.weight")."""
        return self._get_member(target, "_parameter_names", "an nn.Parameter")

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at relative path `target`."""
        return self._get_member(target, "_buffer_names", "a buffer")

    def _get_member(self, target: str, registry: str, what: str) -> Any:
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._label()} has no attribute `{name}`")
        if name not in getattr(module, registry):
            raise AttributeError(f"`{name}` is not {what} (looking up {target!r})")
        return getattr(module, name)

    # ------------------------------------------------------------------------ modes
    def train(self, mode: bool = True) -> Module:
        """Set `training` on this module and every descendant (Dropout reads it)."""
        if not isinstance(mode, bool):
            raise ValueError(f"{self._label()}.train: mode must be a bool, got {mode!r}")
        object.__setattr__(self, "training", mode)
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> Module:
        """`train(False)`."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Freeze (False) or unfreeze every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    # ------------------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The arguments shown between the parentheses of this module's repr."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        children = [(name, getattr(self, name)) for name in self._child_names]
        if not children:
            return f"{type(self).__name__}({extra})"
        lines = ([extra] if extra else []) + [f"({name}): {child!r}" for name, child in children]
        body = "\n".join("  " + line.replace("\n", "\n  ") for line in lines)
        return f"{type(self).__name__}(\n{body}\n)"


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
