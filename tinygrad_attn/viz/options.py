"""What a picture shows: `DrawOptions`, every keyword of `to_dot`, `draw_graph`,
`render_graph` (and of the replay page's graph), and the checks of what a user gave.

This module only holds and checks the options; what they do is picture.py's and dot.py's.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from .axes import check_labels


@dataclass(frozen=True)
class DrawOptions:
    """What a picture shows. Every field is a keyword of to_dot / draw_graph / render_graph.

    - `passes`: "both", "forward" (green and blue edges) or "backward" (red edges only; leaves
      that take no gradient are left out). None (default): "both", except for a graph that
      holds ops a backward pass made (a gradient after `backward(create_graph=True)`): there
      "forward", the backward's ops and their red edges being the backward pass already.
    - `direction`: "LR" (left to right), "TB" (top to bottom) or "auto" (default): left to
      right, as the article draws its head, unless the picture would be more than 10 columns
      wide (a stack of blocks), which reads better top to bottom.
    - `show_values`, `show_grads`: draw values / gradients in the nodes: arrays up to 16 x 16
      as heat maps (purple < 0 < orange; attention weights white -> orange, with numbers), one
      number for a single element, min/mean/max for larger arrays. An intermediate's value is
      there while the program still holds that tensor, or if it was made inside
      `viz.keep_values()` (which also keeps the gradient backward sent it).
    - `axis_labels`: {tensor name: labels of each of its axes}, e.g. `{"X": (words,
      features), "target": (features,)}` (None for an axis left unlabelled). Every axis that
      is the same thing gets the same labels (viz/axes.py): a Linear weight's columns are its
      input's features, its rows the output's; a gradient has its tensor's labels.
    - `all_ops`: draw every primitive op, constant and intermediate tensor (the plumbing:
      weight transposes, the raw `Q Kᵀ`, `x * x` as two edges). By default an op whose unnamed
      result feeds one op is drawn inside that op's node, results inside their ops, constants
      in the formula.
    - `intermediates`: True draws op results as nodes of their own (default: only with
      `all_ops`).
    - `show_saved`: list the arrays each op saved for backward and their size.
    - `show_params`: the op's own parameters under its formula (axis, scale, ...).
    - `clusters`: group ops by the module that made them (nested boxes named by module path).
    - `collapse`: a module path or a list of them ("attn", "blocks.0"): everything made inside
      is drawn as one box. `collapse_depth`: collapse every module at that depth of the path
      or deeper ("blocks.0" is depth 2). `expand`: modules kept open whatever else says;
      inside an expanded module, the module that attends (its softmax, or the fused attention
      `softmax(Q Kᵀ / √d) V`) is open too, unless `collapse` names it.
      With neither `collapse` nor `collapse_depth`, a picture of more than `max_nodes` nodes
      (default 40; None: never) collapses the deepest modules that make it fit. Unknown
      module names are an error that lists the known ones.
    - `model`: the Module that made the graph. Boxes name their module's type
      (`blocks.0 · TransformerBlock`) without it too: each node records the module it was
      made in; `model` also covers modules that made no node directly.
    - `title`: a line above the legend. `legend=False` leaves the legend out.
    - `element_ids`: give every node and edge an `id` attribute that the SVG keeps (a node's
      id is its DOT name, an edge's the one `drawn_ids` reports), so a page can script the
      picture (viz/replay.py does).
    """

    passes: str | None = None
    direction: str = "auto"
    show_values: bool = False
    show_grads: bool = False
    axis_labels: Any = None
    all_ops: bool = False
    intermediates: bool | None = None
    show_saved: bool = False
    show_params: bool = False
    clusters: bool = True
    collapse: tuple[str, ...] = ()
    collapse_depth: int | None = None
    expand: tuple[str, ...] = ()
    max_nodes: int | None = 40
    model: Any = None
    max_elements: int = 12
    title: str | None = None
    legend: bool = True
    element_ids: bool = False

    @classmethod
    def from_keywords(cls, caller: str, **options: Any) -> DrawOptions:
        """Check the keywords a user gave and turn them into options."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(
                f"{caller}: unknown option(s) {', '.join(unknown)}; the options are "
                f"{', '.join(sorted(known))}"
            )
        for key in ("collapse", "expand"):
            value = options.get(key)
            if value is None:
                options[key] = ()
            elif isinstance(value, str):
                options[key] = (value,)
            else:
                options[key] = tuple(value)
        result = cls(**options)
        if result.passes not in (None, "both", "forward", "backward"):
            raise ValueError(
                f"{caller}: passes={result.passes!r}; use 'both', 'forward' or 'backward' (or "
                "None: both, or forward only for a gradient's graph)"
            )
        if result.direction not in ("LR", "TB", "auto"):
            raise ValueError(f"{caller}: direction={result.direction!r}; use 'LR', 'TB' or 'auto'")
        if result.collapse_depth is not None and result.collapse_depth < 1:
            raise ValueError(
                f"{caller}: collapse_depth must be 1 or more, got {result.collapse_depth}"
            )
        if result.axis_labels is not None:
            result = replace(result, axis_labels=check_labels(caller, result.axis_labels))
        return result
