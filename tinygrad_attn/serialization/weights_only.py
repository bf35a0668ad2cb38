"""The weights-only reader: a pickle interpreter that builds containers, numbers and strings and
calls nothing but the few functions it is given.

Python's own unpickler will call any function a file names. This reader walks the opcodes
(`pickletools.genops` decodes them) on a stack machine of its own: every name a file uses
(`GLOBAL`, `STACK_GLOBAL`) is looked up with the `find_global` it is given, which answers with
the object the name stands for and whether it may be called, or refuses; the reader imports
nothing. Only an allowed callable is called (`REDUCE`, `NEWOBJ`), only instances of allowed
classes take state (`BUILD`), items go only into real lists, dicts and sets. Opcodes that
`torch.save` never writes and that could reach further (extension registry, out-of-band
buffers, protocol 0's `INST`/`OBJ`) are refused. A refusal raises `pickle.UnpicklingError`
before the refused name is used, so nothing has run.

It knows nothing about tensors or files: reading.py gives it the names and the storages.
"""

from __future__ import annotations

import pickle
import pickletools
from collections.abc import Callable
from typing import Any

# Python 2 names that protocol 0-2 pickles write for builtins (pickle's fix_imports).
_PYTHON2_MODULES = {"__builtin__": "builtins", "copy_reg": "copyreg"}
_REFUSED_OPCODES = {
    "EXT1": "the extension registry",
    "EXT2": "the extension registry",
    "EXT4": "the extension registry",
    "INST": "protocol 0's class instantiation",
    "OBJ": "protocol 0's class instantiation",
    "NEXT_BUFFER": "out-of-band buffers",
    "READONLY_BUFFER": "out-of-band buffers",
}

FindGlobal = Callable[[str, str], "tuple[Any, bool]"]


class _Mark:
    """The MARK opcode's place on the stack."""


_MARK = _Mark()


def _label(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _refuse(message: str) -> pickle.UnpicklingError:
    return pickle.UnpicklingError(f"ta.load(weights_only=True): {message}")


class WeightsOnlyReader:
    """Reads one pickle (`data`, bytes) with `find_global(module, name) -> (object, callable)`
    for names and `persistent_load(pid)` for persistent ids. `load()` returns the object.

    Errors of the classes in `own_errors` (the caller's clear errors, raised by the functions it
    allows) pass through as they are; any other failure of a call, or of the pickle itself,
    becomes a `pickle.UnpicklingError` that says what failed."""

    def __init__(
        self,
        data: bytes,
        find_global: FindGlobal,
        persistent_load: Callable[[Any], Any],
        own_errors: tuple[type[BaseException], ...] = (),
    ) -> None:
        self._data = data
        self._find_global = find_global
        self._persistent_load = persistent_load
        self._own_errors = own_errors
        self._callable: dict[int, Any] = {}  # id -> object, for everything REDUCE may call

    # ------------------------------------------------------------------ the stack
    def _pop_mark(self, stack: list) -> list:
        """The items above the topmost MARK, removed with it."""
        for i in range(len(stack) - 1, -1, -1):
            if stack[i] is _MARK:
                items = stack[i + 1 :]
                del stack[i:]
                return items
        raise _refuse("the pickle is malformed (an opcode needs a MARK that is not there)")

    def _global(self, module: str, name: str) -> Any:
        module = _PYTHON2_MODULES.get(module, module)
        value, may_call = self._find_global(module, name)  # refuses, or answers
        if may_call:
            self._callable[id(value)] = value
        return value

    def _call(self, what: str, func: Callable, *args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (pickle.UnpicklingError, *self._own_errors):
            raise
        except Exception as err:  # noqa: BLE001 - what an allowed call raised, said plainly
            raise _refuse(f"{what} failed: {type(err).__name__}: {err}") from None

    def _check_callable(self, func: Any, opcode: str) -> None:
        if self._callable.get(id(func)) is not func:
            raise _refuse(
                f"{opcode} would call {type(func).__name__} {func!r:.80}, which is not an allowed "
                "function or class; the file is damaged or was not written by torch.save"
            )

    # ------------------------------------------------------------------ the machine
    def load(self) -> Any:
        stack: list = []
        memo: dict[int, Any] = {}
        try:
            ops = pickletools.genops(self._data)
            for opcode, arg, _ in ops:
                name = opcode.name
                if name == "STOP":
                    if len(stack) != 1:
                        raise _refuse(f"the pickle is malformed (STOP on {len(stack)} items)")
                    return stack[0]
                self._step(name, arg, stack, memo)
        except (pickle.UnpicklingError, *self._own_errors):
            raise
        except (ValueError, IndexError, KeyError, TypeError, EOFError, AttributeError) as err:
            raise _refuse(f"the pickle is malformed or cut short ({err})") from None
        raise _refuse("the pickle ends before its STOP opcode (the file is cut short)")

    def _step(self, name: str, arg: Any, stack: list, memo: dict) -> None:
        if name in _REFUSED_OPCODES:
            raise _refuse(
                f"the pickle uses {name} ({_REFUSED_OPCODES[name]}), which torch.save never "
                "writes and a weights-only load does not run"
            )
        # ---- values
        if name in ("PROTO", "FRAME"):
            if name == "PROTO" and arg > pickle.HIGHEST_PROTOCOL:
                raise _refuse(f"pickle protocol {arg} is newer than this Python reads")
        elif name in ("NONE", "NEWTRUE", "NEWFALSE"):
            stack.append({"NONE": None, "NEWTRUE": True, "NEWFALSE": False}[name])
        elif name in (
            "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "FLOAT", "BINFLOAT",
            "STRING", "BINSTRING", "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "SHORT_BINUNICODE",
            "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
        ):  # fmt: skip
            stack.append(arg)
        elif name == "BYTEARRAY8":
            stack.append(bytearray(arg))
        # ---- containers
        elif name == "MARK":
            stack.append(_MARK)
        elif name == "EMPTY_LIST":
            stack.append([])
        elif name == "EMPTY_DICT":
            stack.append({})
        elif name == "EMPTY_SET":
            stack.append(set())
        elif name == "EMPTY_TUPLE":
            stack.append(())
        elif name in ("TUPLE1", "TUPLE2", "TUPLE3"):
            n = int(name[-1])
            items = tuple(stack[-n:])
            if len(items) != n or any(item is _MARK for item in items):
                raise _refuse(f"the pickle is malformed ({name} on a short stack)")
            del stack[-n:]
            stack.append(items)
        elif name == "TUPLE":
            stack.append(tuple(self._pop_mark(stack)))
        elif name == "LIST":
            stack.append(self._pop_mark(stack))
        elif name == "DICT":
            items = self._pop_mark(stack)
            stack.append(dict(zip(items[::2], items[1::2])))
        elif name == "FROZENSET":
            stack.append(frozenset(self._pop_mark(stack)))
        elif name in ("APPEND", "APPENDS"):
            items = [stack.pop()] if name == "APPEND" else self._pop_mark(stack)
            target = stack[-1]
            if not isinstance(target, list):
                raise _refuse(f"{name} onto a {type(target).__name__}, not a list")
            target.extend(items)
        elif name in ("SETITEM", "SETITEMS"):
            items = stack[-2:] if name == "SETITEM" else self._pop_mark(stack)
            if name == "SETITEM":
                del stack[-2:]
            target = stack[-1]
            if not isinstance(target, dict):
                raise _refuse(f"{name} into a {type(target).__name__}, not a dict")
            for key, value in zip(items[::2], items[1::2]):
                target[key] = value
        elif name == "ADDITEMS":
            items = self._pop_mark(stack)
            target = stack[-1]
            if not isinstance(target, set):
                raise _refuse(f"ADDITEMS into a {type(target).__name__}, not a set")
            target.update(items)
        # ---- the stack and the memo
        elif name == "POP":
            if stack and stack[-1] is not _MARK:
                stack.pop()
            else:
                self._pop_mark(stack)
        elif name == "POP_MARK":
            self._pop_mark(stack)
        elif name == "DUP":
            stack.append(stack[-1])
        elif name in ("PUT", "BINPUT", "LONG_BINPUT"):
            memo[arg] = stack[-1]
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1]
        elif name in ("GET", "BINGET", "LONG_BINGET"):
            if arg not in memo:
                raise _refuse(f"the pickle is malformed ({name} of memo entry {arg}, never put)")
            stack.append(memo[arg])
        # ---- names, calls, state
        elif name == "GLOBAL":
            module, _, attribute = arg.partition(" ")
            stack.append(self._global(module, attribute))
        elif name == "STACK_GLOBAL":
            attribute, module = stack.pop(), stack.pop()
            if not isinstance(module, str) or not isinstance(attribute, str):
                raise _refuse("the pickle is malformed (STACK_GLOBAL of non-strings)")
            stack.append(self._global(module, attribute))
        elif name in ("PERSID", "BINPERSID"):
            pid = arg if name == "PERSID" else stack.pop()
            stack.append(self._call("loading a storage", self._persistent_load, pid))
        elif name == "REDUCE":
            args = stack.pop()
            func = stack[-1]
            self._check_callable(func, "REDUCE")
            if not isinstance(args, tuple):
                raise _refuse(f"REDUCE with arguments {type(args).__name__}, not a tuple")
            stack[-1] = self._call(f"calling {_label(func)}", func, *args)
        elif name in ("NEWOBJ", "NEWOBJ_EX"):
            kwargs = stack.pop() if name == "NEWOBJ_EX" else {}
            args = stack.pop()
            cls = stack.pop()
            self._check_callable(cls, name)
            if not isinstance(cls, type) or not isinstance(args, tuple):
                raise _refuse(f"{name} of {cls!r:.80} with {type(args).__name__} arguments")
            stack.append(self._call(f"making a {_label(cls)}", cls.__new__, cls, *args, **kwargs))
        elif name == "BUILD":
            state = stack.pop()
            self._call("BUILD", self._build, stack[-1], state)
        else:
            raise _refuse(f"the pickle uses opcode {name}, which this reader does not know")

    def _build(self, instance: Any, state: Any) -> None:
        """BUILD: give `instance` its state, only if its class is an allowed one."""
        cls = type(instance)
        if self._callable.get(id(cls)) is not cls:
            raise _refuse(
                f"BUILD would set the state of a {cls.__module__}.{cls.__qualname__}, which is "
                "not an allowed class"
            )
        setstate = getattr(instance, "__setstate__", None)
        if setstate is not None and getattr(cls, "__setstate__", None) is not getattr(
            object, "__setstate__", None
        ):
            setstate(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            if not isinstance(state, dict):
                raise _refuse(f"BUILD with state {type(state).__name__}, not a dict")
            instance.__dict__.update(state)
        if slots:
            if not isinstance(slots, dict):
                raise _refuse(f"BUILD with slot state {type(slots).__name__}, not a dict")
            for key, value in slots.items():
                setattr(instance, key, value)
