"""The flat buffers an optimizer step runs on, and PyTorch's rounding of its few fused ops.

`FlatGroup` lays the parameters of one group (and one dtype) that have a gradient end to end:
their gradients are gathered with one `np.concatenate(out=)`, the optimizer's buffers
(`exp_avg`, `momentum_buffer`, ...) are flat arrays, and each parameter's `state[p][name]` is a
Tensor over its slice (`step` a 0-d float32 Tensor over one element of a flat step counter),
so the update is a handful of NumPy calls over all parameters at once, and the state a user
reads, changes in place or saves is the one the next step uses. The new values go into each
parameter's own memory with an in-place NumPy op (`np.add(p, u, out=p)`, as PyTorch's
`param.add_`), and the write is recorded (`versions.bump`), so a backward through a graph made
before the step, which saved the old values, is refused. A new layout (a parameter gained or
lost its gradient, a shape changed, a state entry was replaced, a checkpoint was loaded) copies
the current state in, so it carries over exactly.

PyTorch's CPU kernels compute `add(x, alpha=a)`, `lerp` and `addcmul` with one fused
multiply-add (one rounding) on the machines it vectorises for (AVX2, AVX-512, NEON). `muladd`
reproduces that for float32 by computing in float64 (the product of two float32 numbers is exact
in float64) and rounding once; SGD uses it, so its float32 steps are PyTorch's bit for bit. It
costs about five times a plain multiply and add (float64 temporaries, out of cache for large
models), so Adam, whose float32 result cannot be bit-exact anyway (PyTorch's `sqrt` on x86 is
MKL's, not always correctly rounded), rounds product and sum separately, in PyTorch's order: a
last-bit difference in some elements. NumPy has no fused multiply-add for float64 at all.

This module must not know any optimizer's formula: it holds arrays, layouts and roundings.
"""

from __future__ import annotations

from operator import attrgetter, is_
from typing import Any

import numpy as np

from .. import versions
from ..errors import ShapeError
from ..tensor import Tensor

_data_of = attrgetter("_data")


def muladd(x: np.ndarray, c: Any, y: np.ndarray, out: np.ndarray, wide: np.ndarray) -> None:
    """out = x * c + y, one rounding for float32 (PyTorch's fused multiply-add); `c` a scalar
    or an array; `wide` a float64 scratch array of x's size (float32 only)."""
    if out.dtype == np.float32:
        if np.ndim(c) == 0:
            c = np.float64(np.float32(c))
        np.multiply(x, c, out=wide, dtype=np.float64)  # exact
        np.add(wide, y, out=out, dtype=np.float64, casting="same_kind")  # the one rounding
    else:
        np.multiply(x, out.dtype.type(c) if np.ndim(c) == 0 else c, out=wide)
        np.add(wide, y, out=out)


def lerp_(start: np.ndarray, end: np.ndarray, weight: float, work: np.ndarray) -> None:
    """start += weight * (end - start), in place, in the order of PyTorch's `lerp_` (the weight
    in the tensors' dtype; from the end point when the weight is 0.5 or more), the product and
    the sum rounded separately (PyTorch fuses them; see `muladd` for the cost of doing so)."""
    w = start.dtype.type(weight)
    np.subtract(end, start, out=work)
    if w < 0.5:
        work *= w
        start += work
    else:
        work *= w - start.dtype.type(1)
        np.add(end, work, out=start)


class FlatGroup:
    """The parameters of one group (and one dtype) that have a gradient, laid end to end.

    `grad` holds their gradients after `gather_grads()`; `buffers[name]` the optimizer's flat
    state; `steps` each parameter's step count (float32, as PyTorch's `state["step"]`); `fresh`
    the parameters (their index) that had no state under the first buffer name yet.
    """

    def __init__(self, params: list, state: Any, names: tuple, with_step: bool) -> None:
        self.params, self.names = params, names
        self.shapes = [p._data.shape for p in params]
        sizes = [p._data.size for p in params]
        ends = np.cumsum(sizes, dtype=np.int64)
        self.bounds = [(int(e - n), int(e)) for e, n in zip(ends, sizes)]
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.dtype = params[0]._data.dtype
        total = int(ends[-1])
        self.grad = np.empty(total, self.dtype)
        self._scratch: dict[str, np.ndarray] = {}
        self.buffers: dict[str, np.ndarray] = {}
        self.fresh: list[int] = []
        self.steps = None
        # (state entry, key, Tensor, the view it must hold), what `holds` checks each step
        self._adopted_entries: list[dict] = []
        self._adopted_keys: list[str] = []
        self._adopted_tensors: list[Tensor] = []
        self._adopted_views: list[np.ndarray] = []
        self._views: dict[int, list] = {}  # id(flat array) -> its per-parameter views
        self._entries = [state[p] for p in params] if (names or with_step) else []
        if with_step:
            self.steps = np.zeros(len(params), np.float32)
            for i, entry in enumerate(self._entries):
                old = entry.get("step")
                if old is not None:
                    self.steps[i] = float(old.item() if isinstance(old, Tensor) else old)
                self._adopt(entry, "step", self.steps[i, ...])  # a 0-d view
        for name in names:
            flat = np.zeros(total, self.dtype)
            for i, (entry, (a, b)) in enumerate(zip(self._entries, self.bounds)):
                view = flat[a:b].reshape(self.shapes[i])
                old = entry.get(name)
                if old is None:
                    if name == names[0]:
                        self.fresh.append(i)
                else:
                    old = old.numpy() if isinstance(old, Tensor) else np.asarray(old)
                    if old.size != view.size:
                        raise ShapeError(
                            f"optimizer step: state[p][{name!r}] has shape {old.shape}, but the "
                            f"parameter ({params[i].name or 'unnamed'}) has shape "
                            f"{self.shapes[i]}; it must have the parameter's shape"
                        )
                    view[...] = old.reshape(view.shape)
                self._adopt(entry, name, view)
            self.buffers[name] = flat

    def _adopt(self, entry: dict, key: str, view: np.ndarray) -> None:
        """Make `entry[key]` a Tensor over `view`: the Tensor already there if it is a plain
        one (so a Tensor held from `state_dict()` stays live, as in PyTorch), else a new one."""
        old = entry.get(key)
        if isinstance(old, Tensor) and old._base is None and old.grad_fn is None:
            old._data = view
            tensor = old
        else:
            tensor = Tensor._make(view)
            tensor.requires_grad = False
        entry[key] = tensor
        self._adopted_entries.append(entry)
        self._adopted_keys.append(key)
        self._adopted_tensors.append(tensor)
        self._adopted_views.append(view)

    def holds(self, params: list, names: tuple, state: Any) -> bool:
        """True when this layout is still the one to use for `params` (same tensors, shapes,
        buffer names, and state entries that are still the Tensors over the flat buffers)."""
        return (
            names == self.names
            and len(params) == len(self.params)
            and all(map(is_, params, self.params))
            and [p._data.shape for p in params] == self.shapes
            and (not self._entries or all(map(is_, map(state.get, params), self._entries)))
            and all(map(is_, map(dict.get, self._adopted_entries, self._adopted_keys),
                            self._adopted_tensors))
            and all(map(is_, map(_data_of, self._adopted_tensors), self._adopted_views))
        )  # fmt: skip

    def release(self) -> None:
        """Give the Tensors still over these buffers (a parameter that left the layout) their
        own memory, so the buffers can go."""
        for tensor, view in zip(self._adopted_tensors, self._adopted_views):
            if tensor._data is view:
                tensor._data = view.copy()

    # ---------------------------------------------------------------- arrays
    def scratch(self, name: str, dtype: Any = None) -> np.ndarray:
        """A work array of the flat size (kept between steps), by name."""
        array = self._scratch.get(name)
        if array is None:
            dtype = self.dtype if dtype is None else dtype
            array = self._scratch[name] = np.empty(self.grad.size, dtype)
        return array

    @property
    def wide(self) -> np.ndarray | None:
        """The float64 scratch array `muladd` rounds float32 results through."""
        return self.scratch("wide", np.float64 if self.dtype == np.float32 else self.dtype)

    def gather_grads(self) -> None:
        np.concatenate([p._grad._data.reshape(-1) for p in self.params], out=self.grad)

    def gather_params(self) -> np.ndarray:
        """The parameters' current values, flat (a copy)."""
        data = self.scratch("data")
        np.concatenate([p._data.reshape(-1) for p in self.params], out=data)
        return data

    def count_step(self) -> list[float]:
        """Add one to every parameter's `state["step"]` (in float32, as PyTorch); returns the
        new counts as Python floats."""
        self.steps += np.float32(1)
        return self.steps.tolist()

    def per_element(self, per_param: list) -> np.ndarray:
        """One value per parameter, repeated over its elements (in the parameters' dtype)."""
        return np.repeat(np.asarray(per_param, dtype=self.dtype), self.sizes)

    # ---------------------------------------------------- writing the parameters
    def add_to_params(self, update: np.ndarray) -> None:
        """p += update (each parameter its slice), in place; a float64 `update` of float32
        parameters is rounded once, as PyTorch's fused `param.add_(g, alpha=-lr)`."""
        views = self._views.get(id(update))
        if views is None or views[0].base is not update:
            views = self._views[id(update)] = [
                update[a:b].reshape(shape) for (a, b), shape in zip(self.bounds, self.shapes)
            ]
        for p, view in zip(self.params, views):
            np.add(p._data, view, out=p._data, casting="same_kind")
            versions.bump(p._data)

    def scale_params(self, factor: Any) -> None:
        """p *= factor, in place (the decoupled weight decay)."""
        factor = self.dtype.type(factor)
        for p in self.params:
            p._data *= factor
            versions.bump(p._data)
