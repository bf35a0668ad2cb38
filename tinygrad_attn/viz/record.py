"""A training recorder: what a training loop looked like every k-th step, at bounded memory.

`Recorder` sits beside any training loop the user writes. Each call to `record(step, ...)`
keeps, for the steps it wants (every `every`-th), COPIES of what the user hands it: the loss
(a float), attention tables, named parameters and their gradients (float32 arrays). It never
keeps a Tensor, so a recorded graph is not kept alive by the recording. When more than
`max_frames` frames are held it drops every other one and doubles `every`, so a run of any
length ends with between `max_frames / 2` and `max_frames` evenly spaced frames (plus the
latest one) instead of growing without end.

`recorder.page()` turns the frames into the learning page (viz/learn.py).

This module only copies arrays; it must not run forward or backward, or change a tensor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import Tensor
from ..nn import Module


def _copy(value: Any, what: str) -> np.ndarray:
    """A float32 copy of a Tensor's data or an array: the frame must not share memory with
    the tensor (the optimizer updates parameters in place) nor reference the tensor."""
    if isinstance(value, Tensor):
        value = value._data
    try:
        array = np.array(value, dtype=np.float32, copy=True)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"Recorder.record: {what} must be a Tensor or an array of numbers, got "
            f"{type(value).__name__} ({err})"
        ) from None
    return array


def _float(value: Any) -> float:
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(
                f"Recorder.record: loss must have one element, got shape {value.shape}; "
                "pass loss.mean() or the number itself"
            )
        return value.item()
    return float(value)


@dataclass
class Frame:
    """One recorded step: the loss, attention tables `{name: (..., T, T)}`, parameters and
    their gradients `{name: array}` (a gradient is None if the parameter had none), and any
    extra numbers the user passed as `values`. Every array is the recorder's own float32 copy."""

    step: int
    loss: float | None = None
    attention: dict[str, np.ndarray] = field(default_factory=dict)
    params: dict[str, np.ndarray] = field(default_factory=dict)
    grads: dict[str, np.ndarray | None] = field(default_factory=dict)
    values: dict[str, float] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        """Bytes held by this frame's arrays."""
        arrays = [*self.attention.values(), *self.params.values(), *self.grads.values()]
        return sum(a.nbytes for a in arrays if a is not None)

    def grad_norm(self, name: str) -> float | None:
        grad = self.grads.get(name)
        return None if grad is None else float(np.linalg.norm(grad.astype(np.float64)))


class Recorder:
    """Records a training run every `every`-th step, keeping at most `max_frames` frames.

    ```python
    rec = Recorder(every=1, max_frames=200)
    rec.label("The earth is like an orange", tokens)   # words along the table's rows/columns
    for step in range(150):
        opt.zero_grad()
        loss = ...                                      # forward
        loss.backward()
        rec.record(step, loss=loss, attention={"The earth is like an orange": head.attn_weights},
                   params=head.named_parameters())      # before opt.step(): the grads that
        opt.step()                                      # this step will apply
    rec.page().save("learn.html")                       # or just `rec.page()` in Jupyter
    ```

    `record` copies only on the steps it wants (`rec.due(step)` says which, so an expensive
    probe can be skipped on the others); `force=True` records a step off the grid (e.g. the
    last one). When the frames overflow, every other frame is dropped and `every` doubles; the
    most recent frame is always kept.
    """

    def __init__(self, every: int = 1, max_frames: int = 200, title: str = "training") -> None:
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"Recorder: every must be an int >= 1, got {every!r}")
        if not isinstance(max_frames, int) or max_frames < 2:
            raise ValueError(f"Recorder: max_frames must be an int >= 2, got {max_frames!r}")
        self.every = every
        self.max_frames = max_frames
        self.title = title
        self.frames: list[Frame] = []
        self.labels: dict[str, tuple[list[str], list[str]]] = {}
        self.notes: dict[str, str] = {}

    # -------------------------------------------------------------- describing what is recorded
    def label(
        self, name: str, rows: Sequence[str], columns: Sequence[str] | None = None
    ) -> Recorder:
        """Labels for the rows and columns of what is recorded as `name`. An attention table:
        `rows` are the queries (who attends), `columns` the keys (attended to; default the
        same words, as in self-attention). A parameter: what its axes are (a Linear weight:
        its output features as `rows`, its input features as `columns`)."""
        rows = [str(r) for r in rows]
        columns = rows if columns is None else [str(c) for c in columns]
        self.labels[name] = (rows, columns)
        return self

    def note(self, name: str, text: str) -> Recorder:
        """A short description shown next to table or parameter `name` on the page."""
        self.notes[name] = str(text)
        return self

    # -------------------------------------------------------------- recording
    def due(self, step: int) -> bool:
        """Whether `record(step, ...)` would keep this step."""
        return step % self.every == 0

    def record(
        self,
        step: int,
        *,
        loss: Any = None,
        attention: Mapping[str, Any] | None = None,
        params: Module | Mapping[str, Tensor] | Iterable[tuple[str, Tensor]] | None = None,
        grads: bool = True,
        values: Mapping[str, Any] | None = None,
        force: bool = False,
    ) -> Frame | None:
        """Copy what the page should show of `step`; returns the frame, or None if skipped.

        `loss`: a one-element Tensor or a number. `attention`: `{name: (T, T) or (H, T, T)}`
        tables (Tensor or array). `params`: named parameters (a Module, its
        `named_parameters()` or a dict); with `grads=True` their `.grad` is copied too.
        `values`: other numbers to plot.
        """
        if not isinstance(step, (int, np.integer)):
            raise TypeError(f"Recorder.record: step must be an int, got {type(step).__name__}")
        step = int(step)
        if self.frames and step <= self.frames[-1].step:
            raise ValueError(
                f"Recorder.record: steps must increase; got step {step} after step "
                f"{self.frames[-1].step}"
            )
        if not (force or self.due(step)):
            return None
        frame = Frame(step, None if loss is None else _float(loss))
        for name, table in (attention or {}).items():
            frame.attention[str(name)] = _copy(table, f"attention[{name!r}]")
        if isinstance(params, Module):
            params = params.named_parameters()
        items = params.items() if isinstance(params, Mapping) else (params or ())
        for name, param in items:
            frame.params[name] = _copy(param, f"parameter {name!r}")
            if grads:
                grad = param.grad if isinstance(param, Tensor) else None
                frame.grads[name] = None if grad is None else _copy(grad, f"{name}.grad")
        for name, value in (values or {}).items():
            frame.values[str(name)] = _float(value)
        self.frames.append(frame)
        if len(self.frames) > self.max_frames:
            self._decimate()
        return frame

    def _decimate(self) -> None:
        """Keep the frames on a grid twice as coarse (and the latest frame), double `every`."""
        self.every *= 2
        latest = self.frames[-1]
        kept = [f for f in self.frames[:-1] if f.step % self.every == 0]
        if len(kept) + 1 > self.max_frames:  # off-grid (forced) frames: keep every other one
            kept = kept[::2]
        self.frames = [*kept, latest]

    # -------------------------------------------------------------- reading
    @property
    def nbytes(self) -> int:
        """Bytes held by all frames' arrays."""
        return sum(f.nbytes for f in self.frames)

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        steps = f"steps {self.frames[0].step}..{self.frames[-1].step}" if self.frames else "empty"
        return (
            f"Recorder({len(self.frames)} frames, {steps}, every={self.every}, "
            f"max_frames={self.max_frames}, {self.nbytes / 1e6:.2f} MB)"
        )

    def page(self, **options: Any):
        """The learning page of these frames (viz/learn.py's `LearningPage`): `.save(path)`,
        `.html`, and shown inline in Jupyter."""
        from .learn import LearningPage

        return LearningPage(self, **options)
