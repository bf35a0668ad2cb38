"""Pictures of computation graphs, in the reference article's colours.

`to_dot(*roots, **options)` gives DOT text, `draw_graph(...)` a `graphviz.Digraph` (shown inline
in Jupyter), `render_graph(..., path=...)` an .svg, .png or .dot file. Forward edges are green,
backward (gradient) edges red, data that takes no gradient blue; every picture has a legend.
Values and gradients are heat maps in the palette of `tinygrad_attn.format`; `keep_values()`
keeps them for a picture drawn after backward. `replay_backward(loss, path)` writes a page that
steps through the backward pass; `Recorder` keeps frames of a training loop and `LearningPage`
(`python -m tinygrad_attn learn`) shows them. `trace(*roots)` is the graph walk they all read.

viz only reads the graph and draws: nothing in the core imports it, and it imports no example
and trains nothing (the recorded runs of `python -m tinygrad_attn learn` are in
tinygrad_attn/examples/learning.py).
"""

from .dot import BLUE, GREEN, RED
from .learn import LearningPage
from .options import DrawOptions
from .record import Recorder
from .render import (
    ENV_VAR,
    GraphPicture,
    RendererNotFound,
    RendererWarning,
    draw_graph,
    find_renderer,
    render_graph,
    run_renderer,
    to_dot,
)
from .replay import replay_backward
from .trace import TracedGraph, trace
from .values import keep_values

__all__ = [
    "BLUE",
    "ENV_VAR",
    "GREEN",
    "RED",
    "DrawOptions",
    "GraphPicture",
    "LearningPage",
    "Recorder",
    "RendererNotFound",
    "RendererWarning",
    "TracedGraph",
    "draw_graph",
    "find_renderer",
    "keep_values",
    "render_graph",
    "replay_backward",
    "run_renderer",
    "to_dot",
    "trace",
]
