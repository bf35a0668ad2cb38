"""The backward replay page (viz/replay.py): what the HTML holds, checked in Python, and how it
behaves, checked in a real headless Chromium driven by selenium.

The browser tests skip when Chromium, its driver or selenium is missing, with the reason, except
under CI (the environment variable CI set), where they fail: CI must run them.
"""

import html
import json
import re
import shutil

import numpy as np
import pytest
from _browser import headless_chromium

import tinygrad_attn as ta
from tinygrad_attn import Tensor, nn
from tinygrad_attn import functional as F
from tinygrad_attn.__main__ import main as cli
from tinygrad_attn.examples import SENTENCE, TinyLanguageModel
from tinygrad_attn.viz import DrawOptions, replay_backward, to_dot, trace
from tinygrad_attn.viz.dot import drawn_ids
from tinygrad_attn.viz.replay import array_summary


# ------------------------------------------------------------------------------ models
def head_loss(seed: int = 0, dtype=np.float64) -> tuple[Tensor, nn.SelfAttention]:
    """The article's single head on "The earth is like an orange" (seeded: twins are equal)."""
    rng = np.random.default_rng(seed)
    ta.manual_seed(seed)
    previous = ta.get_default_dtype()
    ta.set_default_dtype(dtype)
    try:
        head = nn.SelfAttention(4)
    finally:
        ta.set_default_dtype(previous)
    x = Tensor(rng.uniform(-1, 1, (len(SENTENCE), 4)).astype(dtype), name="X")  # (T, D)
    target = Tensor(rng.uniform(-1, 1, (len(SENTENCE), 4)).astype(dtype), name="target")
    loss = F.mse_loss(head(x), target)
    loss.name = "loss"
    return loss, head


def block_loss(seed: int = 0) -> Tensor:
    """Next-word loss of a tiny model around a transformer block (a graph of ~150 nodes)."""
    ta.manual_seed(seed)
    vocab = {word: i for i, word in enumerate(sorted(set(SENTENCE)))}
    tokens = np.array([[vocab[word] for word in SENTENCE]])  # (1, T)
    model = TinyLanguageModel(len(vocab), embed_dim=8, num_heads=2)
    loss = F.cross_entropy(model(tokens[:, :-1]), tokens[:, 1:], axis=-1)
    loss.name = "loss"
    return loss


def page_data(path) -> dict:
    """The replay data embedded in the page, as the page's script reads it."""
    text = path.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="rp-data">(.*?)</script>', text, re.S)
    assert match, "the page has no replay data"
    return json.loads(match.group(1))


def svg_ids(path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    start = text.index("<svg", text.index('<div id="rp-graph">'))  # the graph, not its legend
    svg = text[start : text.index("</svg>", start)]
    return {html.unescape(i) for i in re.findall(r'<g id="([^"]+)"', svg)}  # "-" is &#45;


@pytest.fixture
def head_page(tmp_path):
    loss, head = head_loss()
    path = replay_backward(loss, tmp_path / "backward.html")
    return path, head


# ------------------------------------------------------------------------------ the HTML
def test_page_is_one_file_with_nothing_from_the_network(head_page):
    path, _ = head_page
    text = path.read_text(encoding="utf-8")
    assert re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", text, re.I) is None
    assert re.search(r"url\(\s*[\"']?\s*(https?:)?//", text, re.I) is None
    assert "<link" not in text and "@import" not in text and "@font-face" not in text
    assert re.search(r"<script[^>]*\bsrc=", text) is None
    assert "<!DOCTYPE svg" not in text  # the SVG's own prolog is stripped: it is inline
    assert text.count("<svg") == 2  # the graph, and its legend (kept in view outside it)


def test_one_step_per_backward_step_in_the_same_order(head_page):
    path, _ = head_page
    data = page_data(path)
    twin, _ = head_loss()
    expected = list(twin.backward_steps())
    assert len(data["steps"]) == len(expected)
    assert [s["op"] for s in data["steps"]] == [s.op for s in expected]
    assert [s["index"] for s in data["steps"]] == list(range(len(expected)))


def test_gradients_shown_are_the_engines(head_page):
    path, _ = head_page
    data = page_data(path)
    twin, _ = head_loss()
    for shown, step in zip(data["steps"], twin.backward_steps()):
        norm = float(np.linalg.norm(step.grad_output))
        assert shown["grad_output"]["stats"]["norm"] == pytest.approx(norm, rel=1e-3)
        assert shown["grad_output"]["shape"] == list(step.grad_output.shape)
        for entry, grad in zip(shown["inputs"], step.grad_inputs):
            if grad is None:
                assert entry["grad"] is None and entry["why"]
            else:
                assert entry["grad"]["shape"] == list(grad.shape)
                if grad.size <= 64:
                    np.testing.assert_allclose(
                        np.array(entry["grad"]["rows"]).ravel(), grad.ravel(), rtol=1e-3, atol=1e-12
                    )


def test_replay_leaves_the_gradients_backward_leaves(head_page):
    _, head = head_page
    twin, twin_head = head_loss()
    twin.backward()
    for (name, p), (_, q) in zip(head.named_parameters(), twin_head.named_parameters()):
        np.testing.assert_array_equal(p.grad, q.grad, err_msg=name)


def test_every_highlighted_id_is_an_element_of_the_svg(head_page):
    path, _ = head_page
    data = page_data(path)
    ids = svg_ids(path)
    for step in data["steps"]:
        assert step["node"] in ids and step["node"] in step["now"]
        assert set(step["now"]) | set(step["flow"]) <= ids
        red = [i for i in step["now"] if i != step["node"]]
        assert all(i.endswith("-b") or "-b-" in i for i in red)
    assert set(data["backward_edges"]) <= ids
    # a step whose op is drawn inside another op's node (the weight's Transpose inside
    # "X Wᵀ") may have no edge of its own; every node drawn lights red edges at some step
    for node in {s["node"] for s in data["steps"]}:
        assert any(len(s["now"]) > 1 for s in data["steps"] if s["node"] == node), node
    assert {s["node"] for s in data["steps"]} == {s["node"] for s in data["steps"] if s["first"]}


def test_every_red_edge_is_reached_once(head_page):
    path, _ = head_page
    data = page_data(path)
    firsts = [i for step in data["steps"] for i in step["first"]]
    assert len(firsts) == len(set(firsts))
    assert set(data["backward_edges"]) <= set(firsts)


def test_last_step_holds_every_parameters_final_gradient(head_page):
    path, head = head_page
    data = page_data(path)
    grads = dict(data["initial"])
    for step in data["steps"]:
        grads.update(step["leaves"])
    names = [leaf["name"] for leaf in data["leaves"]]
    assert sorted(names) == sorted(name for name, _ in head.named_parameters())
    for i, name in enumerate(names):
        param = dict(head.named_parameters())[name]
        got, want = np.array(grads[str(i)]["rows"]).ravel(), param.grad.numpy().ravel()
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-12)


def test_a_gradient_that_was_there_before_is_shown_from_the_start(tmp_path):
    loss, head = head_loss()
    head.query.weight.grad = ta.ones(4, 4, dtype=head.query.weight.dtype)  # an earlier backward
    data = page_data(replay_backward(loss, tmp_path / "b.html"))
    index = [leaf["name"] for leaf in data["leaves"]].index("query.weight")
    assert data["initial"][str(index)]["rows"] == [[1.0] * 4] * 4


def test_a_name_with_markup_cannot_break_the_page(tmp_path):
    loss, head = head_loss()
    loss.name = "</script><script>alert(1)</script>"
    head.key.weight.name = "<b>&amp;"
    text = replay_backward(loss, tmp_path / "b.html").read_text(encoding="utf-8")
    assert text.count("</script>") == 2  # the data block's end and the script's end
    assert "alert(1)" in text
    data = page_data(tmp_path / "b.html")
    assert "<b>&amp;" in [leaf["name"] for leaf in data["leaves"]]


def test_non_finite_values_are_text_in_the_json():
    summary = array_summary(np.array([1.0, np.nan, np.inf, -np.inf]))
    assert summary["rows"] == [[1.0, "NaN", "Inf", "-Inf"]]
    assert summary["nan"] == 1 and summary["inf"] == 2
    assert summary["stats"]["max"] == 1.0
    json.dumps(summary, allow_nan=False)


def test_large_arrays_are_statistics_only():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(10, 10))
    summary = array_summary(a)
    assert "rows" not in summary
    assert summary["stats"]["norm"] == pytest.approx(np.linalg.norm(a), rel=1e-3)
    assert summary["stats"]["mean"] == pytest.approx(a.mean(), rel=1e-3)


def test_a_released_graph_cannot_be_replayed(tmp_path):
    loss, _ = head_loss()
    loss.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        replay_backward(loss, tmp_path / "b.html")


def test_options_are_checked_before_backward_runs(tmp_path):
    loss, head = head_loss()
    with pytest.raises(TypeError, match="replay_backward: unknown option"):
        replay_backward(loss, tmp_path / "b.html", colour="red")
    with pytest.raises(ValueError, match="passes='forward'"):
        replay_backward(loss, tmp_path / "b.html", passes="forward")
    with pytest.raises(TypeError, match="Tensor"):
        replay_backward(loss.numpy(), tmp_path / "b.html")
    assert all(p.grad is None for p in head.parameters())
    replay_backward(loss, tmp_path / "b.html")  # the graph was not consumed
    assert all(p.grad is not None for p in head.parameters())


def test_graph_options_reach_the_picture(tmp_path):
    loss, _ = head_loss()
    text = replay_backward(loss, tmp_path / "b.html", show_values=True, title="my title")
    text = text.read_text("utf-8")
    assert f"= {loss.item():.4g}" in text  # the loss is still referenced: its value is drawn
    assert "<title>my title</title>" in text


def test_a_collapsed_transformer_block_highlights_module_boxes(tmp_path):
    loss = block_loss()
    path = replay_backward(loss, tmp_path / "block.html", collapse_depth=2)
    data = page_data(path)
    ids = svg_ids(path)
    assert len(data["steps"]) == len(list(block_loss().backward_steps()))
    boxes = {s["node"] for s in data["steps"] if s["node"].startswith("m")}
    assert boxes and boxes <= ids
    for step in data["steps"]:
        assert set(step["now"]) | set(step["flow"]) <= ids


def test_drawn_ids_name_the_svg_elements():
    loss, _ = head_loss()
    traced = trace(loss)
    options = DrawOptions(element_ids=True, all_ops=True, max_nodes=None)
    ids = drawn_ids(traced, options)
    dot = to_dot(loss, element_ids=True, all_ops=True, max_nodes=None)
    for edge_id in filter(None, ids.forward_edges + ids.backward_edges):
        assert f"id={edge_id}" in dot or f'id="{edge_id}"' in dot
    assert set(ids.nodes) == {r.id for r in traced.tensors} | {o.id for o in traced.ops}
    # one red twin per differentiable edge, none for X or the target
    red = [e for e, i in zip(traced.edges, ids.backward_edges) if i is not None]
    assert red == [e for e in traced.edges if e.differentiable]
    assert "id=" not in to_dot(loss)  # off by default: the DOT of other pictures is unchanged


def test_drawn_ids_give_x_times_x_two_edges():
    x = Tensor(np.arange(3.0), requires_grad=True, name="x")
    traced = trace((x * x).sum())
    ids = drawn_ids(traced, DrawOptions(all_ops=True))
    # x -> Mul twice, Mul -> x*x, x*x -> Sum, Sum -> out: five edges, each with its own id
    assert len(traced.edges) == 5
    assert len(set(ids.backward_edges)) == 5 and None not in ids.backward_edges
    assert len(set(ids.forward_edges)) == 5 and None not in ids.forward_edges


def test_command_line_writes_the_page(tmp_path, capsys):
    assert cli(["replay", "--out", str(tmp_path)]) == 0
    path = tmp_path / "backward_head.html"  # one file name per model
    assert str(path) in capsys.readouterr().out
    data = page_data(path)
    assert data["steps"][0]["op"] == "Mean" and len(data["steps"]) > 10
    assert {leaf["name"] for leaf in data["leaves"]} == {
        "query.weight",
        "key.weight",
        "value.weight",
    }


# ------------------------------------------------------------------------------ the browser
@pytest.fixture(scope="module")
def browser():
    with headless_chromium("replay-chromium-", "1400,900") as driver:
        yield driver


class Page:
    """The replay page open in the browser: its counter, highlighted node, keys, panel."""

    def __init__(self, driver, path) -> None:
        from selenium.webdriver.common.by import By

        self.driver = driver
        self.by = By
        driver.get_log("browser")  # drop what earlier pages logged
        driver.get(path.resolve().as_uri())

    def counter(self) -> tuple[int, int]:
        """(steps run, steps in all); the step shown is named by its BackwardStep.index."""
        text = self.driver.find_element(self.by.ID, "rp-counter").text
        match = re.fullmatch(r"(?:before backward|step (\d+)) · (\d+) of (\d+) run", text)
        assert match, f"counter reads {text!r}"
        index, run, total = match.groups()
        assert (index is None) == (run == "0")
        assert index is None or int(index) == int(run) - 1  # one numbering: the engine's
        return int(run), int(total)

    def press(self, key: str, times: int = 1) -> None:
        from selenium.webdriver.common.keys import Keys

        body = self.driver.find_element(self.by.TAG_NAME, "body")
        for _ in range(times):
            body.send_keys(getattr(Keys, key))

    def click(self, element_id: str) -> None:
        self.driver.find_element(self.by.ID, element_id).click()

    def highlighted_nodes(self) -> list[str]:
        return self.driver.execute_script(
            "return [...document.querySelectorAll('#rp-graph g.node.rp-now')].map(e => e.id)"
        )

    def red_edges(self) -> dict:
        """How many red edges are reached (drawn red), current, and faded (by computed style)."""
        return self.driver.execute_script(
            """
            const edges = [...document.querySelectorAll('#rp-graph g.edge.rp-bwd')];
            return {
              total: edges.length,
              reached: edges.filter(e => e.classList.contains('rp-reached')).length,
              now: edges.filter(e => e.classList.contains('rp-now')).length,
              faded: edges.filter(e => Number(getComputedStyle(e).opacity) < 0.5).length,
            };"""
        )

    def errors(self) -> list:
        return [e for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]


def test_page_loads_without_console_errors(browser, head_page):
    path, _ = head_page
    page = Page(browser, path)
    steps = len(page_data(path)["steps"])
    assert page.counter() == (0, steps)
    edges = page.red_edges()
    assert edges["total"] == len(page_data(path)["backward_edges"]) > 0
    assert edges["reached"] == 0 and edges["faded"] == edges["total"]
    assert page.highlighted_nodes() == []
    assert page.errors() == []


def test_right_arrow_advances_and_moves_the_highlight(browser, head_page):
    path, _ = head_page
    data = page_data(path)
    page = Page(browser, path)
    seen = []
    for k in range(1, 5):
        page.press("ARROW_RIGHT")
        assert page.counter()[0] == k
        assert page.highlighted_nodes() == [data["steps"][k - 1]["node"]]
        seen.append(page.highlighted_nodes()[0])
        edges = page.red_edges()
        assert edges["now"] >= (1 if len(data["steps"][k - 1]["now"]) > 1 else 0)
        assert edges["faded"] == edges["total"] - edges["reached"]
        op = browser.find_element(page.by.ID, "rp-op").text
        assert op == f"{data['steps'][k - 1]['op']}.backward"
    assert len(set(seen)) >= 2  # the highlight moves along the graph
    assert page.errors() == []


def test_left_arrow_and_the_buttons_go_back(browser, head_page):
    path, _ = head_page
    data = page_data(path)
    page = Page(browser, path)
    page.press("ARROW_RIGHT", 3)
    reached_at_3 = page.red_edges()["reached"]
    page.press("ARROW_LEFT")
    assert page.counter()[0] == 2
    assert page.highlighted_nodes() == [data["steps"][1]["node"]]
    assert page.red_edges()["reached"] < reached_at_3
    page.click("rp-prev")
    page.click("rp-prev")
    assert page.counter()[0] == 0 and page.highlighted_nodes() == []
    page.press("ARROW_LEFT")  # no step before the first
    assert page.counter()[0] == 0
    page.click("rp-next")
    assert page.counter()[0] == 1
    assert page.errors() == []


def test_last_step_shows_every_parameters_gradient(browser, head_page):
    path, head = head_page
    page = Page(browser, path)
    total = page.counter()[1]
    page.press("ARROW_RIGHT", total + 2)  # past the end stays at the end
    assert page.counter() == (total, total)
    edges = page.red_edges()
    assert edges["reached"] == edges["total"] and edges["faded"] == 0
    for name, param in head.named_parameters():
        row = browser.find_element(page.by.CSS_SELECTOR, f'#rp-leaves [data-leaf="{name}"]')
        assert "rp-has-grad" in row.get_attribute("class").split()
        assert f"norm {float(f'{np.linalg.norm(param.grad):.4g}')}" in row.text
    page.press("HOME")
    assert page.counter()[0] == 0
    rows = browser.find_elements(page.by.CSS_SELECTOR, "#rp-leaves .rp-has-grad")
    assert rows == []
    page.press("END")
    assert page.counter()[0] == total
    assert page.errors() == []


def test_a_transformer_block_replays_in_the_browser(browser, tmp_path):
    path = replay_backward(block_loss(), tmp_path / "block.html")
    data = page_data(path)
    page = Page(browser, path)
    total = page.counter()[1]
    assert total == len(data["steps"])
    page.press("END")
    assert page.red_edges()["faded"] == 0
    page.press("ARROW_LEFT", 5)
    assert page.counter()[0] == total - 5
    assert page.highlighted_nodes() == [data["steps"][total - 6]["node"]]
    assert page.errors() == []


# ------------------------------------------------------------------------------ issue 14
def test_the_page_is_made_of_package_data_files(head_page):
    from importlib import resources

    from tinygrad_attn.viz.replay import asset

    path, _ = head_page
    text = path.read_text(encoding="utf-8")
    folder = resources.files("tinygrad_attn.viz").joinpath("assets")
    for name in ("replay.html", "replay.css", "replay.js"):
        assert folder.joinpath(name).is_file()
    assert asset("replay.js").strip()[-20:] in text and asset("replay.css")[-40:] in text


def test_the_css_is_scoped_to_the_page_root(head_page):
    path, _ = head_page
    styles = re.findall(r"<style>(.*?)</style>", path.read_text(encoding="utf-8"), re.S)
    css = re.sub(r"/\*.*?\*/", "", "".join(styles), flags=re.S)  # every rule of the page
    for rule in re.findall(r"([^{}]+)\{", css):
        for selector in rule.split(","):
            assert selector.strip().startswith(".rp-root"), selector


def test_a_replay_shows_itself_in_a_notebook_as_an_iframe(head_page):
    path, _ = head_page
    shown = path._repr_html_()
    assert shown.startswith("<iframe srcdoc=") and "rp-root" in shown
    assert "<script>" not in shown  # escaped inside the attribute


def test_forward_values_and_token_labels_reach_the_page(tmp_path):
    from tinygrad_attn import examples

    ta.manual_seed(0)
    head = nn.SelfAttention(len(examples.FEATURES))
    loss = examples.sense_loss(head, examples.SENTENCES[0])
    path = replay_backward(loss, tmp_path / "p.html", axis_labels=examples.HEAD_AXES)
    data = page_data(path)
    softmax = next(s for s in data["steps"] if s["op"] == "Softmax")
    assert [f["label"] for f in softmax["forward"]] == ["output weights (6, 6) float32"]
    weights = softmax["forward"][0]["value"]
    np.testing.assert_allclose(np.sum(weights["rows"], axis=1), 1, atol=1e-3)
    words = list(examples.SENTENCE)
    assert weights["row_labels"] == weights["col_labels"] == words
    assert weights["attention"] is True
    assert softmax["grad_output"]["col_labels"] == words  # labelled like its tensor
    assert softmax["grad_output"]["attention"] is False  # a gradient: its own signed scale
    assert data["palette"] == {"negative": "#5e3c99", "zero": "#f7f7f7", "positive": "#e66101"}


def test_command_line_replays_a_transformer(tmp_path, capsys):
    assert cli(["replay", "--out", str(tmp_path), "--model", "transformer"]) == 0
    data = page_data(tmp_path / "backward_transformer.html")  # the head's page stays
    assert any(s["node"].startswith("m") for s in data["steps"])  # collapsed module boxes
    assert len(data["steps"]) > 20  # (fused Linear/LayerNorm/GELU/CrossEntropy: 23 steps)


def _labelled_page(tmp_path):
    from tinygrad_attn import examples

    ta.manual_seed(0)
    head = nn.SelfAttention(len(examples.FEATURES))
    loss = examples.sense_loss(head, examples.SENTENCES[0])
    return replay_backward(loss, tmp_path / "labelled.html", axis_labels=examples.HEAD_AXES)


def test_tables_have_token_labels_and_the_value_palette(browser, tmp_path):
    path = _labelled_page(tmp_path)
    page = Page(browser, path)
    page.press("ARROW_RIGHT", 9)
    heads = browser.execute_script(
        "return [...document.querySelectorAll('#rp-panel .rp-arr th')].map(e => e.textContent)"
    )
    assert "orange" in heads and "earth" in heads
    colours = set(
        browser.execute_script(
            "return [...document.querySelectorAll('#rp-panel .rp-arr td')]"
            ".map(e => getComputedStyle(e).backgroundColor)"
        )
    )
    allowed_ends = {"rgb(94, 60, 153)", "rgb(247, 247, 247)", "rgb(230, 97, 1)"}
    assert colours & allowed_ends
    for colour in colours:  # between white and purple or orange: never the pass colours
        r, g, b = (int(v) for v in re.findall(r"\d+", colour)[:3])
        assert not (r > 200 and g < 80 and b < 80) and not (b > 150 and r < 60), colour
    assert page.errors() == []


def test_keys_belong_to_a_text_field_that_has_focus(browser, head_page):
    path, _ = head_page
    page = Page(browser, path)
    browser.execute_script(
        "const f = document.createElement('input'); f.id = 'typing';"
        "document.body.prepend(f); f.focus();"
    )
    browser.find_element(page.by.ID, "typing").send_keys("ab")
    from selenium.webdriver.common.keys import Keys

    browser.find_element(page.by.ID, "typing").send_keys(Keys.ARROW_RIGHT)
    assert page.counter()[0] == 0
    page.press("ARROW_RIGHT")
    assert page.counter()[0] == 1


def test_the_whole_graph_is_in_view_at_readable_size_and_each_step_is_scrolled_to(
    browser, tmp_path
):
    path = replay_backward(block_loss(), tmp_path / "block.html")
    page = Page(browser, path)
    zoom = browser.execute_script(
        "const svg = document.querySelector('#rp-graph svg');"
        "return svg.getBoundingClientRect().width / (svg.viewBox.baseVal.width * 4 / 3);"
    )
    assert zoom >= 0.749  # the picture's 9 pt text at least 9 px
    shown = browser.execute_script(
        "const g = document.getElementById('rp-graph');"
        "return [g.scrollWidth <= g.clientWidth + 1 && g.scrollHeight <= g.clientHeight + 1,"
        " getComputedStyle(document.getElementById('rp-minimap')).display];"
    )
    assert shown[0] or shown[1] == "block"  # all of it, or a minimap of all of it
    data = page_data(path)
    for k in range(1, len(data["steps"]) + 1, 7):
        page.driver.execute_script(f"window.replay.go({k})")
        step = data["steps"][k - 1]
        inside = browser.execute_script(
            "const e = document.getElementById(arguments[0]).getBoundingClientRect();"
            "const g = document.getElementById('rp-graph').getBoundingClientRect();"
            "return e.left >= g.left - 1 && e.right <= g.right + 1 &&"
            " e.top >= g.top - 1 && e.bottom <= g.bottom + 1;",
            step["node"],
        )
        assert inside, (k, step["node"])
    assert page.errors() == []


def test_the_script_parses(tmp_path):
    """The page's script, checked by itself (Node's parser), not only inside the page."""
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the browser tests still load the script")
    from tinygrad_attn.viz.replay import asset

    script = tmp_path / "replay.js"
    script.write_text(asset("replay.js"), encoding="utf-8")
    done = subprocess.run([node, "--check", str(script)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ------------------------------------------------------------------------------ issue 25
def test_a_linear_weights_gradient_is_labelled_outputs_down_inputs_across(tmp_path):
    from tinygrad_attn import examples

    path = _labelled_page(tmp_path)
    data = page_data(path)
    leaves = [leaf["name"] for leaf in data["leaves"]]
    final = {}
    for step in data["steps"]:
        final.update(step["leaves"])
    query = final[str(leaves.index("query.weight"))]
    assert query["row_labels"] == list(examples.QK_DIMS)  # rows: the layer's outputs
    assert query["col_labels"] == list(examples.FEATURES)  # columns: its inputs, X's features
    value = final[str(leaves.index("value.weight"))]
    assert value["row_labels"] == value["col_labels"] == list(examples.FEATURES)
    back_to_w = [s for s in data["steps"] if s["inputs"][0]["label"].startswith("query.weight")]
    assert back_to_w[0]["op"] == "Transpose"  # Wᵀ's gradient, sent back to W
    assert back_to_w[0]["inputs"][0]["grad"]["row_labels"] == list(examples.QK_DIMS)
    assert back_to_w[0]["inputs"][0]["grad"]["col_labels"] == list(examples.FEATURES)


def test_an_attention_weight_has_the_graphs_colour_in_the_replay(browser, tmp_path):
    from tinygrad_attn.viz.heatmap import heatmap

    path = _labelled_page(tmp_path)
    data = page_data(path)
    k = 1 + next(i for i, s in enumerate(data["steps"]) if s["op"] == "Softmax")
    page = Page(browser, path)
    page.driver.execute_script(f"window.replay.go({k})")
    cells = browser.execute_script(
        "return [...document.querySelectorAll('#rp-panel table.rp-attention td')]"
        ".map(e => [e.title, getComputedStyle(e).backgroundColor])"
    )
    assert len(cells) == 36  # the softmax's output, 6 x 6: on the attention scale
    value, shown = next((float(t), c) for t, c in cells if t.startswith("0.16"))
    grid = np.array([[value, 1.0]])  # the graph's heat map of that weight (and a 1 beside it)
    drawn = re.search(r'bgcolor="#(\w{6})"', heatmap(grid, attention=True)).group(1)
    assert shown == "rgb({}, {}, {})".format(*(int(drawn[i : i + 2], 16) for i in (0, 2, 4)))
    r, g, b = (int(v) for v in re.findall(r"\d+", shown))
    assert r > 230 and g > 200 and b > 180  # 0.17 of the way to orange: pale, as in the graph
    assert page.errors() == []


def test_the_legend_and_the_formula_stay_in_view_while_stepping(browser, tmp_path):
    """Issue 25: stepping through a transformer's replay scrolled its legend off to the left
    and the panel down past the step's formula; both stay in view now."""
    path = replay_backward(block_loss(), tmp_path / "block.html")
    page = Page(browser, path)
    total = page.counter()[1]
    for k in range(1, total + 1, 3):
        page.driver.execute_script(f"window.replay.go({k})")
        legend, formula, panel = browser.execute_script(
            "const box = (e) => { const r = e.getBoundingClientRect();"
            " return [r.left, r.top, r.right, r.bottom]; };"
            "return [box(document.querySelector('#rp-legend svg')),"
            " box(document.getElementById('rp-formula')),"
            " box(document.getElementById('rp-panel'))];"
        )
        width, height = browser.execute_script("return [innerWidth, innerHeight]")
        assert legend[0] >= 0 and legend[1] >= 0 and legend[2] <= width, (k, legend)
        assert panel[1] <= formula[1] and formula[3] <= panel[3], (k, formula, panel)
    assert page.errors() == []
