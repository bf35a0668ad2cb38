"""The README is true by construction: every ```python block in README.md runs as written, in
order, in one namespace (a block may use what an earlier one defined), in a temporary folder;
a block directly followed by a ```text (or unlabelled) block must print exactly that text.

Markers (an HTML comment on the line just above a fence, invisible on GitHub):
- `<!-- fragment -->` above a ```python block: it uses names of the reader's own program and is
  not run;
- `<!-- excerpt -->` above an output block: it shows part of what is printed; its lines must
  appear in the printed text, in order.
Any other ```python block must run: see the README's "Developing" section.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"
_FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass
class Block:
    line: int  # 1-based line of the opening fence
    language: str
    text: str
    marker: str | None  # the <!-- ... --> just above the fence, if any
    output: Block | None = None


def read_blocks(markdown: str) -> list[Block]:
    """The fenced blocks of `markdown`, each ```python one given the output block after it."""
    lines = markdown.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        start, language = i, match.group(1)
        above = lines[start - 1].strip() if start else ""
        marker = re.fullmatch(r"<!--\s*(.*?)\s*-->", above)
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith("```"):
            body.append(lines[i])
            i += 1
        blocks.append(
            Block(start + 1, language, "\n".join(body) + "\n", marker.group(1) if marker else None)
        )
        i += 1
    for previous, block in zip(blocks, blocks[1:]):
        if previous.language == "python" and block.language in ("", "text"):
            between = lines[previous.line + previous.text.count("\n") + 1 : block.line - 1]
            if all(not line.strip() or line.strip().startswith("<!--") for line in between):
                previous.output = block
    return blocks


def python_blocks() -> list[Block]:
    return [b for b in read_blocks(README.read_text(encoding="utf-8")) if b.language == "python"]


def _clean(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


class Reader:
    """Runs the README's blocks in order, once each, sharing one namespace."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.namespace: dict = {"__name__": "readme"}
        self.done: dict[int, str | BaseException] = {}  # block line -> printed text or error

    def run_through(self, blocks: list[Block], upto: Block) -> str:
        for block in blocks:
            if block.marker == "fragment" or block.line in self.done:
                if block is upto:
                    break
                continue
            printed = io.StringIO()
            cwd = os.getcwd()
            os.chdir(self.folder)
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(block.text, f"README.md:{block.line}", "exec"), self.namespace)
                self.done[block.line] = printed.getvalue()
            except BaseException as err:  # noqa: BLE001 - reported by the block's own test
                self.done[block.line] = err
            finally:
                os.chdir(cwd)
            if block is upto:
                break
        result = self.done[upto.line]
        if isinstance(result, BaseException):
            raise AssertionError(
                f"README.md:{upto.line}: the block fails as written: "
                f"{type(result).__name__}: {result}. Fix it, or mark it <!-- fragment --> "
                "if it needs names from the reader's own program."
            ) from result
        return result


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    return Reader(tmp_path_factory.mktemp("readme"))


BLOCKS = python_blocks()


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{b.line}" for b in BLOCKS])
def test_readme_block_runs_and_prints_what_the_readme_shows(block, reader):
    if block.marker == "fragment":
        pytest.skip(f"README.md:{block.line} is marked as a fragment")
    printed = reader.run_through(BLOCKS, block)
    if block.output is None:
        return
    shown = _clean(block.output.text)
    got = _clean(printed)
    if block.output.marker == "excerpt":
        position = 0
        for line in shown:
            assert line in got[position:], (
                f"README.md:{block.output.line}: {line!r} is not printed (after line "
                f"{position}); printed:\n" + "\n".join(got)
            )
            position = got.index(line, position) + 1
    else:
        assert got == shown, f"README.md:{block.output.line}: the README shows other output"


def test_the_markers_are_read():
    blocks = read_blocks(
        "<!-- fragment -->\n```python\nmissing()\n```\n\n```python\nprint(1)\n```\n"
        "<!-- excerpt -->\n```text\n1\n```\n"
    )
    assert [b.marker for b in blocks] == ["fragment", None, "excerpt"]
    assert blocks[0].output is None and blocks[1].output is blocks[2]


def test_every_python_block_is_either_run_or_a_marked_fragment():
    assert BLOCKS, "README.md has no python block"
    for block in BLOCKS:
        assert block.marker in (None, "fragment"), f"README.md:{block.line}: {block.marker!r}"


def test_every_picture_the_readme_shows_is_in_the_repository():
    text = README.read_text(encoding="utf-8")
    pictures = re.findall(r"\]\((docs/[^)]+)\)", text)
    assert {"docs/screenshot_attention_graph.png", "docs/screenshot_replay_first.png"} <= set(
        pictures
    )
    for picture in pictures:
        assert (README.parent / picture).is_file(), f"README.md shows {picture}, which is missing"


def test_the_replay_captions_name_the_steps_the_engine_takes(tmp_path):
    """The README says which op the middle and last replay screenshots show: the engine's
    order decides, so the captions are checked against a fresh run (after a change of order,
    run `python docs/make_pictures.py` and update the captions)."""
    from tinygrad_attn.examples import replay_example

    text = README.read_text(encoding="utf-8")
    page = replay_example(tmp_path).read_text(encoding="utf-8")
    ops = re.findall(r'"index":(\d+),"op":"(\w+)"', page)
    steps = {int(index): op for index, op in ops}
    middle = re.search(
        r"Half way, at step (\d+) \(the engine numbers its steps 0 … (\d+)\), `(\w+)\.backward`",
        text,
    )
    last = re.search(r"And the last step, (\d+), `(\w+)\.backward`", text)
    assert middle and last, "the replay section's captions changed shape; update this test"
    assert int(middle.group(2)) == len(steps) - 1 == int(last.group(1))
    assert steps[int(middle.group(1))] == middle.group(3)
    assert steps[int(last.group(1))] == last.group(2)
    # docs/make_pictures.py shoots #step=len//2 (that many steps run): its last one shown
    assert int(middle.group(1)) == len(steps) // 2 - 1


def test_the_graph_pictures_in_docs_are_what_the_code_draws_now(tmp_path):
    """docs/attention_graph.* and docs/transformer_stack.* drawn afresh carry the same words and
    numbers (every <text> of the SVG), and each PNG has its SVG's proportions: a change to the
    graph or its labels that was not followed by `python docs/make_pictures.py` fails here."""
    from svg_geometry import Geometry

    from tinygrad_attn.examples import render_examples
    from tinygrad_attn.viz.render import RendererNotFound

    try:
        render_examples(tmp_path)
    except RendererNotFound:
        pytest.skip("no Graphviz renderer on this machine")
    docs = README.parent / "docs"
    for stem in ("attention_graph", "transformer_stack"):
        committed = Geometry((docs / f"{stem}.svg").read_text(encoding="utf-8"))
        fresh = Geometry((tmp_path / f"{stem}.svg").read_text(encoding="utf-8"))
        assert sorted(committed.texts) == sorted(fresh.texts), (
            f"docs/{stem}.svg is stale: run python docs/make_pictures.py"
        )
        png = (docs / f"{stem}.png").read_bytes()
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        aspect = committed.width / committed.height
        assert abs(width / height / aspect - 1) < 0.02, f"docs/{stem}.png is stale"
