"""Drawing the graph: the public `to_dot`, `draw_graph`, `render_graph`, and finding a renderer.

A renderer is a program that turns DOT text into SVG or PNG. It is looked for in this order:

1. the environment variable `TINYGRAD_ATTN_DOT` (a path to an executable, or a command name);
2. Graphviz's `dot` on the PATH;
3. the `graphviz-pure` executable (`pip install graphviz-pure`), in the running interpreter's
   scripts folder and next to `sys.executable` (so an unactivated virtual environment works),
   then on the PATH.

It is run here with `subprocess` (`<exe> -Kdot -Tsvg`, DOT on stdin), not through the `graphviz`
package's own `render`, which only ever looks for a program called `dot`.

This module must not decide what the picture looks like (dot.py does) nor walk the graph
(trace.py does).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import warnings
from pathlib import Path
from typing import Any

import graphviz

from .dot import fill_graph
from .options import DrawOptions
from .trace import trace

ENV_VAR = "TINYGRAD_ATTN_DOT"
FORMATS = ("svg", "png", "dot")

_HOW_TO_GET_ONE = (
    "Install a renderer with `pip install graphviz-pure` (no system packages needed) or "
    "`apt-get install graphviz` (or your system's Graphviz package), or set "
    f"{ENV_VAR}=/path/to/dot."
)


# What a renderer says that changes nothing in the picture (graphviz-pure estimates the width
# of "→" and "…" from a space).
_HARMLESS = ("no value for width of non-ASCII character", "Falling back to width of space")


class RendererNotFound(RuntimeError):
    """No program that turns DOT into pictures could be found."""


def _interpreter_script_dirs() -> list[str]:
    """Where pip put console scripts for this interpreter (also when its venv is not active)."""
    folders = []
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if folder and folder not in folders:
            folders.append(folder)
    return folders


def find_renderer() -> str | None:
    """The path of the DOT renderer to use, or None if there is none (see the module doc).

    A `TINYGRAD_ATTN_DOT` that names nothing runnable is an error, not a silent fallback:
    the user asked for that program.
    """
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        found = shutil.which(chosen)
        if found is None:
            raise RendererNotFound(
                f"{ENV_VAR}={chosen!r} is not an executable program. Point it at Graphviz's "
                "`dot` or at `graphviz-pure`, or unset it to let tinygrad_attn look for one."
            )
        return found
    found = shutil.which("dot")
    if found is not None:
        return found
    for folder in _interpreter_script_dirs():
        found = shutil.which("graphviz-pure", path=folder)
        if found is not None:
            return found
    return shutil.which("graphviz-pure")


def run_renderer(dot_source: str, format: str, renderer: str | None = None) -> bytes:
    """Lay out `dot_source` with the renderer and return the picture's bytes (svg or png)."""
    if format not in ("svg", "png"):
        raise ValueError(f"run_renderer: format must be 'svg' or 'png', got {format!r}")
    exe = renderer or find_renderer()
    if exe is None:
        raise RendererNotFound(f"No Graphviz renderer found. {_HOW_TO_GET_ONE}")
    done = subprocess.run(
        [exe, "-Kdot", f"-T{format}"],
        input=dot_source.encode("utf-8"),
        capture_output=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise RuntimeError(
            f"the renderer {exe} failed (exit status {done.returncode}) drawing {format}: "
            f"{message or 'no output'}"
        )
    message = "\n".join(
        line
        for line in done.stderr.decode("utf-8", "replace").splitlines()
        if line.strip() and not any(noise in line for noise in _HARMLESS)
    )
    if message:  # the picture was drawn, but the renderer had something to say
        warnings.warn(f"the renderer {Path(exe).name} said: {message}", RendererWarning, 2)
    return done.stdout


class RendererWarning(UserWarning):
    """What the renderer printed while drawing (e.g. `dot` scaling a picture down)."""


class GraphPicture(graphviz.Digraph):
    """A `graphviz.Digraph` that shows itself inline in Jupyter with tinygrad_attn's renderer.

    `.source` is the DOT text; `.pipe(format)` returns the rendered bytes using the renderer
    that `find_renderer()` finds (the `graphviz` package's own only looks for `dot`).
    """

    def pipe(  # type: ignore[override]
        self,
        format: str | None = None,
        renderer: str | None = None,
        formatter: str | None = None,
        neato_no_op: Any = None,
        quiet: bool = False,
        *,
        engine: str | None = None,
        encoding: str | None = None,
    ) -> bytes | str:
        """Render with our renderer (plain svg/png); anything fancier goes to graphviz's."""
        fmt = format or self.format
        if (
            renderer
            or formatter
            or neato_no_op
            or (engine not in (None, "dot"))
            or fmt
            not in (
                "svg",
                "png",
            )
        ):
            return super().pipe(
                format, renderer, formatter, neato_no_op, quiet, engine=engine, encoding=encoding
            )
        data = run_renderer(self.source, fmt)
        return data.decode(encoding) if encoding else data

    def _render(  # type: ignore[override]
        self, engine: str, format: str | None, filepath: Any = None, **kwargs: Any
    ) -> str:
        """What graphviz's `render()` and `view()` call once the DOT file is saved: draw plain
        svg/png with our renderer (so `draw_graph(loss).render("graph", format="png")`, the
        torchviz idiom, works without a `dot` program); anything fancier goes to graphviz's."""
        fancy = kwargs.get("renderer") or kwargs.get("formatter") or kwargs.get("neato_no_op")
        if fancy or engine != "dot" or format not in ("svg", "png") or filepath is None:
            return graphviz.backend.render(engine, format, filepath, **kwargs)
        source = Path(filepath)
        outfile = kwargs.get("outfile")
        target = Path(outfile) if outfile is not None else Path(f"{source}.{format}")
        if kwargs.get("raise_if_result_exists") and target.exists():
            raise graphviz.FileExistsError(f"output file exists: {os.fspath(target)!r}")
        target.write_bytes(run_renderer(source.read_text(encoding="utf-8"), format))
        return os.fspath(target)

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None, **_: Any) -> dict:
        try:
            svg = self._repr_svg_()
        except RuntimeError as err:
            return {"text/plain": f"{err}\n\nDOT source:\n{self.source}"}
        return {"image/svg+xml": svg}

    def _repr_svg_(self) -> str:
        """The SVG, sized to fit a notebook cell: as wide as the cell allows, never wider than
        its natural size, the height following (no sideways scrolling)."""
        svg = run_renderer(self.source, "svg").decode("utf-8")
        return re.sub(
            r'<svg width="([\d.]+)pt" height="[\d.]+pt"',
            r'<svg width="100%" style="max-width: \1pt; height: auto"',
            svg,
            count=1,
        )


def draw_graph(*roots: Any, **options: Any) -> GraphPicture:
    """The computation graph that made `roots` (Tensors), as a `graphviz.Digraph`.

    Forward edges are green, backward (gradient) edges red and pointing back towards the
    parameters, edges of data that takes no gradient (X, masks, constants) blue; a legend
    says so. Options (all keywords, see `DrawOptions`): passes, direction, show_values,
    show_grads, axis_labels, all_ops, intermediates, show_saved, show_params, clusters,
    collapse, collapse_depth, expand, max_nodes, model, max_elements, title, legend. Works
    before and after backward(): a released graph keeps its structure, names, shapes and the
    leaves' gradients (and, inside `viz.keep_values()`, every value and gradient).
    """
    return _draw("draw_graph", roots, options)


def _draw(caller: str, roots: tuple, options: dict) -> GraphPicture:
    settings = DrawOptions.from_keywords(caller, **options)
    picture = GraphPicture(name="tinygrad_attn", format="svg")
    fill_graph(picture, trace(*roots), settings, caller)
    return picture


def to_dot(*roots: Any, **options: Any) -> str:
    """The DOT text of `draw_graph(*roots, **options)`: the same program gives the same text."""
    return _draw("to_dot", roots, options).source


MAX_PNG_WIDTH = 8000  # pixels: wider PNGs are drawn at a lower resolution
_LOWEST_DPI = 24  # below this a PNG's 9 pt text is under 3 px: an error, with advice


def render_graph(
    *roots: Any,
    path: str | os.PathLike,
    format: str | None = None,
    max_png_width: int = MAX_PNG_WIDTH,
    **options: Any,
) -> Path:
    """Draw the graph of `roots` to `path` (.svg, .png or .dot) and return the path.

    `format` defaults to the file's suffix. A PNG is never wider than `max_png_width` pixels:
    a wider picture is drawn at a lower resolution, and one that would need text under 3 px
    is a ValueError that says how to make it smaller (collapse modules, or draw an SVG).
    Without a renderer, the DOT text is written next to `path` (same name, `.dot`) and a
    RuntimeError says how to install one. What the renderer prints comes as a
    `RendererWarning`.
    """
    path = Path(path)
    fmt = (format or path.suffix.lstrip(".")).lower()
    if fmt not in FORMATS:
        raise ValueError(
            f"render_graph: cannot tell the format of {str(path)!r}; use a .svg, .png or .dot "
            "file name, or pass format='svg' / 'png' / 'dot'"
        )
    source = _draw("render_graph", roots, options).source
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "dot":
        path.write_text(source, encoding="utf-8")
        return path
    try:
        exe = find_renderer()
        problem = f"no Graphviz renderer found. {_HOW_TO_GET_ONE}"
    except RendererNotFound as err:  # TINYGRAD_ATTN_DOT names nothing runnable
        exe, problem = None, str(err)
    if exe is None:
        dot_path = path.with_suffix(".dot")
        dot_path.write_text(source, encoding="utf-8")
        raise RendererNotFound(
            f"render_graph: cannot draw {path}: {problem} The DOT text was written to "
            f"{dot_path}; render it later with `graphviz-pure -Tsvg {dot_path.name}`."
        )
    if fmt == "png":
        source = _with_png_resolution(source, exe, max_png_width, path)
    path.write_bytes(run_renderer(source, fmt, exe))
    return path


def _with_png_resolution(source: str, exe: str, max_width: int, path: Path) -> str:
    """The DOT text with a lower `dpi` if the PNG would be wider than `max_width` pixels."""
    svg = run_renderer(source, "svg", exe).decode("utf-8")
    match = re.search(r'<svg width="([\d.]+)pt"', svg)
    if match is None:
        return source
    width_pt = float(match.group(1))
    if width_pt * 96 / 72 <= max_width:  # 96 dpi: Graphviz's resolution for bitmaps
        return source
    dpi = 0.99 * 72 * max_width / width_pt  # (Graphviz rounds the size up)
    if dpi < _LOWEST_DPI:
        raise ValueError(
            f"render_graph: {path.name} would be {width_pt * 96 / 72:,.0f} px wide; within "
            f"max_png_width={max_width} its text would be under 3 px. Collapse modules "
            "(collapse_depth=1, or collapse=[...]), draw direction='TB', or write an .svg "
            "(it scales without limit)."
        )
    head, _, body = source.partition("{")
    return f"{head}{{\n\tdpi={dpi:.2f}{body}"
