"""The README is true by construction: every ```python block in README.md runs as written, in
order, in one namespace (a block may use what an earlier one defined), in a temporary folder;
a block directly followed by a ```text (or unlabelled) block must print exactly that text.

Markers (an HTML comment on the line just above a fence, invisible on GitHub):
- `<!-- fragment -->` above a ```python block: it uses names of the reader's own program and is
  not run (a reader must see that too: its first line is a comment saying what it needs);
- `<!-- excerpt -->` above an output block: it shows part of what is printed; its lines must
  appear in the printed text, in order (a line ending in "..." matches a printed line that
  starts with what comes before the dots; a line of dots alone stands for lines left out).
A block that defines `test_...` functions (pasted into a test file, pytest would run them) has
them called here too. Any other ```python block must run: see the README's "Developing"
section.
"""

from __future__ import annotations

import contextlib
import io
import linecache
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
                before = {k: v for k, v in self.namespace.items() if k.startswith("test_")}
                filename = f"README.md:{block.line}"
                # its lines, for tracebacks and creation sites, as a file's would be
                lines = block.text.splitlines(keepends=True)
                linecache.cache[filename] = (len(block.text), None, lines, filename)
                with contextlib.redirect_stdout(printed):
                    exec(compile(block.text, filename, "exec"), self.namespace)
                    for name, test in list(self.namespace.items()):  # as pytest would run them
                        if (
                            name.startswith("test_")
                            and callable(test)
                            and before.get(name) is not test
                        ):
                            test()
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
        assert_excerpt(shown, got, f"README.md:{block.output.line}")
    else:
        assert got == shown, f"README.md:{block.output.line}: the README shows other output"


def assert_excerpt(shown: list[str], got: list[str], where: str) -> None:
    """Every line of `shown` is printed, in order (see the module doc for "...")."""
    position = 0
    for line in shown:
        if line.strip() in ("...", "…"):
            continue
        if line.endswith("..."):
            start = line[:-3]
            found = [i for i in range(position, len(got)) if got[i].startswith(start)]
        else:
            found = [i for i in range(position, len(got)) if got[i] == line]
        assert found, f"{where}: {line!r} is not printed (after line {position}); printed:\n" + (
            "\n".join(got)
        )
        position = found[0] + 1


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
        if block.marker == "fragment":  # the reader sees it too, in the block's first line
            first = block.text.lstrip().splitlines()[0]
            assert first.startswith("#") and ("needs" in first or "continues" in first), (
                f"README.md:{block.line}: a fragment must say in its first line, as a comment, "
                f"what it needs; it starts {first!r}"
            )


def test_every_picture_the_readme_shows_is_in_the_repository():
    text = README.read_text(encoding="utf-8")
    pictures = re.findall(r"\]\((docs/[^)]+)\)", text)
    assert {"docs/screenshot_attention_graph.png", "docs/screenshot_replay_first.png"} <= set(
        pictures
    )
    for picture in pictures:
        assert (README.parent / picture).is_file(), f"README.md shows {picture}, which is missing"


def test_the_replay_captions_name_the_steps_the_engine_takes(tmp_path):
    """The README says which op the softmax and last replay screenshots show: the engine's
    order decides, so the captions are checked against a fresh run (after a change of order,
    run `python docs/make_pictures.py` and update the captions)."""
    from tinygrad_attn.examples import replay_example

    text = README.read_text(encoding="utf-8")
    page = replay_example(tmp_path).read_text(encoding="utf-8")
    ops = re.findall(r'"index":(\d+),"op":"(\w+)"', page)
    steps = {int(index): op for index, op in ops}
    softmax = re.search(
        r"At step (\d+) \(the engine numbers its steps 0 … (\d+)\), `(\w+)\.backward`", text
    )
    last = re.search(r"And the last step, (\d+), `(\w+)\.backward`", text)
    assert softmax and last, "the replay section's captions changed shape; update this test"
    assert int(softmax.group(2)) == len(steps) - 1 == int(last.group(1))
    assert steps[int(softmax.group(1))] == softmax.group(3) == "Softmax"
    assert steps[int(last.group(1))] == last.group(2)
    counter = re.search(r"the counter reads `step (\d+) · (\d+) of (\d+) run`", text)
    assert counter and int(counter.group(1)) == int(softmax.group(1))
    assert int(counter.group(2)) == int(softmax.group(1)) + 1 and int(counter.group(3)) == len(
        steps
    )


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def test_the_graph_numbers_the_readme_states_are_the_codes():
    """Node and op counts of the transformer pictures, and the trained head's weight in the
    first picture's caption, computed afresh."""
    from svg_geometry import Geometry  # noqa: F401  (the tests folder is on the path)
    from test_viz import Dot

    from tinygrad_attn.examples import (
        SENTENCES,
        head_attention,
        trained_head,
        transformer_stack_step,
    )
    from tinygrad_attn.viz import to_dot, trace

    text = " ".join(README.read_text(encoding="utf-8").split())
    loss, model = transformer_stack_step()
    stated = re.search(
        r"two `TransformerBlock`s \(E=32\) are (\d+) primitive ops, (\d+) nodes when every op, "
        r"constant and intermediate tensor is drawn \(`all_ops=True`\), and (\d+) nodes by default",
        text,
    )
    assert stated, "the README's sentence on the two blocks changed shape; update this test"
    ops, every, default = (int(g) for g in stated.groups())
    assert ops == len(trace(loss).ops)
    assert every == len(Dot(to_dot(loss, all_ops=True, max_nodes=None)).nodes)
    assert default == len(Dot(to_dot(loss, model=model)).nodes)
    box = re.search(r"a MultiHeadAttention box \((\d+) ops, 8 parameters, ([\d,]+) values\)", text)
    shown = Dot(to_dot(loss, model=model)).nodes
    attn = next(n for n in shown.values() if "0.attn · MultiHeadAttention" in n["label"])
    assert (
        f">{box.group(1)} ops<" in attn["label"]
        and f">8 parameters, {box.group(2)} values<" in (attn["label"])
    )
    big = re.search(r"24 `TransformerBlock`s \(E=32\) has ([\d,]+) nodes with `all_ops=True`; by "
                    r"default it collapses to (\d+)", text)  # fmt: skip
    loss24, model24 = transformer_stack_step(24)
    assert int(_number(big.group(1))) == len(
        Dot(to_dot(loss24, all_ops=True, max_nodes=None)).nodes
    )
    assert int(big.group(2)) == len(Dot(to_dot(loss24, model=model24)).nodes)
    from tinygrad_attn.examples import model_gradient_picture

    gradient, options = model_gradient_picture()
    drawn = to_dot(gradient, **options)
    stated = re.search(r'\("its backward: (\d+) ops"\)', text).group(1)
    block = re.search(r"block · TransformerBlock</b>.*?its backward: (\d+) ops<", drawn)
    assert block.group(1) == stated, "the block's backward box says otherwise"
    assert re.search(rf"the backward of head, of block \({stated} ops\)", text)
    head = trained_head()
    seen = head_attention(head, SENTENCES[0])
    earth = seen.weights[seen.tokens.index("orange"), seen.tokens.index("earth")]
    captions = re.findall(r"!\[([^\]]*)\]\(docs/screenshot_attention_graph\.png\)", text)
    assert captions and any('"orange" gives "earth"' in c for c in captions)
    for caption in captions:
        for number in re.findall(r'"orange" gives "earth" (0\.\d\d)', caption):
            assert number == f"{earth:.2f}"


def test_the_learning_captions_are_the_runs_numbers():
    """The learning page's screenshots say what "orange" attends to and the loss, at steps 0,
    30 and the last: the recorded run says the same, and the command's line says its frames."""
    from tinygrad_attn.examples import STEPS
    from tinygrad_attn.examples.learning import learning_page, orange_looks, record_article_head

    text = " ".join(README.read_text(encoding="utf-8").split())
    rec = record_article_head()
    for step in (0, 30, STEPS):
        caption = re.search(rf"!\[Step {step}: (.*?)\]\(docs/learn_step{step:03d}\.png\)", text)
        assert caption, f"no caption for the screenshot at step {step}"
        words = caption.group(1)
        earth, context = orange_looks(rec, step)
        numbers = re.findall(r'(?:"earth"|"color"|together in the second|color" together)[^0-9]*'
                             r"(\d\.\d\d)", words)  # fmt: skip
        assert f"{earth:.2f}" in words and f"{context:.2f}" in words, (words, earth, context)
        assert numbers, words
        loss = re.search(r"The loss is ([\d.e+-]+?)\.?(?:\s|$)|the loss is ([\d.e+-]+)", words)
        value = loss.group(1) or loss.group(2)
        assert abs(float(value) - rec.frames[step].loss) <= 0.005 + 0.05 * rec.frames[step].loss
    line = re.search(r"wrote out/learn_head\.html \((\d+) frames, ([\d.]+) MB", text)
    page = learning_page("head")
    assert int(line.group(1)) == len(page.data["steps"]) == STEPS + 1
    assert abs(float(line.group(2)) - len(page.html.encode()) / 1e6) < 0.006


def test_the_page_sizes_the_readme_states_are_the_pages():
    from tinygrad_attn.examples.learning import learning_page, one_blas_thread

    text = " ".join(README.read_text(encoding="utf-8").split())
    sizes = re.search(
        r"Sizes: ([\d.]+) MB for the head \((\d+) frames\), ([\d.]+) MB for the classifier "
        r"\((\d+) frames\) and ([\d.]+) MB for the transformer \((\d+) frames",
        text,
    )
    assert sizes, "the README's sentence on page sizes changed shape; update this test"
    stated = sizes.groups()
    for k, model in enumerate(("head", "classifier", "transformer")):
        with one_blas_thread():  # (tiny matrices: more BLAS threads only spin)
            page = learning_page(model)
        assert int(stated[2 * k + 1]) == len(page.data["steps"]), model
        assert abs(float(stated[2 * k]) - len(page.html.encode()) / 1e6) < 0.006, model


def test_the_debugging_excerpts_are_what_the_code_prints():
    """The pdb excerpt stops where Softmax.backward starts; the anomaly excerpt is demo 04's
    output, line number included."""
    import contextlib
    import inspect
    import io
    import runpy

    from tinygrad_attn.ops import softmax

    text = README.read_text(encoding="utf-8")
    stop = re.search(r"softmax\.py\((\d+)\)backward\(\)\n-> (.*)\n", text)
    source, first = inspect.getsourcelines(softmax.Softmax.backward)
    body = next(i for i, line in enumerate(source) if line.strip() and i and '"""' not in line
                and not line.strip().startswith(("@", "def")))  # fmt: skip
    assert int(stop.group(1)) == first + body and source[body].strip() == stop.group(2).strip()
    demo = runpy.run_path(str(README.parent / "demos" / "04_debugging_a_gradient.py"), run_name="x")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        demo["find_the_planted_bugs"]()
    excerpt = re.search(r"In a forward pass, demo 04 prints:\n\n```text\n(.*?)```", text, re.S)
    assert_excerpt(_clean(excerpt.group(1)), _clean(printed.getvalue()), "README (anomaly)")


def test_the_demos_reach_the_results_the_readme_states():
    """The demos table's numbers, from the demos run with their default arguments."""
    import contextlib
    import io
    import runpy

    text = README.read_text(encoding="utf-8")
    table = re.search(r"### Demos\n(.*?)\n\n", text, re.S).group(1)
    two = re.search(r"\*\*([\d.]+) %\*\* held-out accuracy \((\d+) sentences\)", table)
    three = re.search(r"\*\*([\d.]+) %\*\* of (\d+) held-out sequences", table)
    from tinygrad_attn.examples.learning import one_blas_thread

    results = {}
    for script in ("02_learning_orange.py", "03_causal_transformer.py"):
        demo = runpy.run_path(str(README.parent / "demos" / script), run_name="x")
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), one_blas_thread():
            results[script] = (demo["main"]([]), printed.getvalue())
    accuracy, printed = results["02_learning_orange.py"]
    assert f"{accuracy:.1%}" == f"{two.group(1)}%" and two.group(2) == "512"
    looked = re.search(r'the script prints where "orange"\nlooked:\n\n```\n(.*?)```', text, re.S)
    assert_excerpt(_clean(looked.group(1)), _clean(printed), "README (demo 2)")
    accuracy, printed = results["03_causal_transformer.py"]
    assert f"{accuracy:.0%}" == f"{three.group(1)}%" and three.group(2) == "500"
    assert "tensor(" not in printed  # the decoded digits print as digits


def test_the_char_gpt_script_reaches_the_val_loss_the_readme_states(tmp_path):
    """Demo 06's row: its default run (a subprocess, so the script's one BLAS thread holds) prints
    the stated val losses at steps 0 and 500, and the reloaded checkpoint's equals the model's."""
    import runpy
    import subprocess
    import sys

    text = README.read_text(encoding="utf-8")
    row = re.search(r"\| `demos/06_train_char_gpt\.py` \|.*", text).group(0)
    stated = re.search(
        r"2 blocks, E=64.*val loss \*\*([\d.]+) → ([\d.]+)\*\* in (\d+) steps of (\d+)", row
    )
    script = README.parent / "demos" / "06_train_char_gpt.py"
    defaults = runpy.run_path(str(script), run_name="x")["parse_args"]([])
    assert (defaults.n_layer, defaults.n_embd) == (2, 64)
    assert (str(defaults.steps), str(defaults.batch_size)) == stated.group(3, 4)
    done = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"PYTHONPATH": str(README.parent), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    val = dict(re.findall(r"^step (\d+): train loss [\d.]+, val loss ([\d.]+)$", done.stdout, re.M))
    assert f"{float(val['0']):.2f}" == stated.group(1)
    assert f"{float(val[stated.group(3)]):.2f}" == stated.group(2)
    trained, reloaded = re.search(
        r"trained model ([\d.]+); reloaded from \S+ ([\d.]+)", done.stdout
    ).groups()
    assert trained == reloaded


def test_the_graph_pictures_in_docs_are_what_the_code_draws_now(tmp_path):
    """docs/attention_graph.*, transformer_stack.*, transformer_attention.*, backward_as_ops.* and
    model_gradient.*
    drawn afresh carry
    the same words and
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
    for stem in (
        "attention_graph",
        "transformer_stack",
        "transformer_attention",
        "backward_as_ops",
        "model_gradient",
    ):
        committed = Geometry((docs / f"{stem}.svg").read_text(encoding="utf-8"))
        fresh = Geometry((tmp_path / f"{stem}.svg").read_text(encoding="utf-8"))
        assert sorted(committed.texts) == sorted(fresh.texts), (
            f"docs/{stem}.svg is stale: run python docs/make_pictures.py"
        )
        png = (docs / f"{stem}.png").read_bytes()
        width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
        aspect = committed.width / committed.height
        assert abs(width / height / aspect - 1) < 0.02, f"docs/{stem}.png is stale"


def test_the_gradcheck_table_is_what_the_command_prints():
    """The table the README shows is the command's, seeded as it is (the time aside)."""
    import contextlib
    import io

    from tinygrad_attn.testing.cli import main

    text = README.read_text(encoding="utf-8")
    block = re.search(r"```text\n\$ python -m tinygrad_attn gradcheck (.*?)\n(.*?)```", text, re.S)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(block.group(1).split()) == 0
    got = re.sub(r"[\d.]+ s\)$", "… s)", printed.getvalue().rstrip(), flags=re.M)
    assert _clean(got) == _clean(block.group(2))


def test_demo_07s_output_is_what_the_readme_shows(tmp_path):
    """The "Backward is a graph too" section shows what demo 07 prints, run as a reader runs
    it (its own process: it sets float64 as the default dtype). The two H v errors are
    rounding-sized, so they may differ by a factor of a few from one machine's BLAS to
    another's; every other line is as printed. The demos table's bound is the demo's."""
    import subprocess
    import sys

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Backward is a graph too") :]
    shown = _clean(re.search(r"It prints:\n\n```text\n(.*?)```", section, re.S).group(1))
    done = subprocess.run(
        [sys.executable, str(README.parent / "demos" / "07_backward_is_a_graph.py")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(README.parent)},
    )
    assert done.returncode == 0, done.stderr
    printed = _clean(done.stdout)
    assert len(printed) == len(shown), printed
    error = re.compile(r"(.*central differences\| = )([\d.e+-]+)$")
    for want, got in zip(shown, printed):
        want_error, got_error = error.match(want), error.match(got)
        if want_error and got_error:
            assert want_error.group(1) == got_error.group(1)
            assert 0.1 < float(want_error.group(2)) / float(got_error.group(2)) < 10, got
        else:
            assert want == got
    largest = float(re.search(r"largest entry of H v is ([\d.e+-]+)", done.stdout).group(1))
    table = re.search(r"### Demos\n(.*?)\n\n", text, re.S).group(1)
    bound = re.search(r"07_backward_is_a_graph.py.*gradient to \*\*([\d.e-]+)\*\* of its", table)
    errors = [float(m) for m in re.findall(r"differences\| = ([\d.e+-]+)", done.stdout)]
    assert bound and max(errors) < float(bound.group(1)) * largest


def test_the_one_meaning_case_count_is_the_files():
    from one_meaning_cases import CASES

    text = " ".join(README.read_text(encoding="utf-8").split())
    stated = re.search(r"`tests/one_meaning_cases.py` holds (\d+) snippets", text).group(1)
    assert int(stated) == len(CASES)
