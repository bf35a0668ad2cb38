"""The graph renderer: what the DOT says (nodes, edge colours, legend, clusters, collapse),
that it is deterministic and still draws a released graph, and how a renderer is found."""

import gc
import html
import os
import re
import stat
import sys

import graphviz
import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor
from tinygrad_attn.state import observers, set_creation_site_finder
from tinygrad_attn.viz import (
    BLUE,
    ENV_VAR,
    GREEN,
    RED,
    RendererNotFound,
    draw_graph,
    find_renderer,
    render_graph,
    run_renderer,
    to_dot,
    trace,
)
from tinygrad_attn.viz import render as render_module


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# ------------------------------------------------------------------ reading the DOT text
def _value_end(text: str, i: int) -> int:
    """Index just past the attribute value starting at text[i] (<html>, "quoted" or bare)."""
    if text[i] == "<":
        depth = 0
        while True:
            if text[i] == "<":
                depth += 1
            elif text[i] == ">":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
    if text[i] == '"':
        i += 1
        while text[i] != '"':
            i += 2 if text[i] == "\\" else 1
        return i + 1
    match = re.compile(r"[^\s\]]+").match(text, i)
    return match.end()


def _attrs(text: str) -> dict:
    attrs = {}
    i = 0
    while i < len(text):
        match = re.compile(r"\s*(\w+)=").match(text, i)
        if not match:
            break
        end = _value_end(text, match.end())
        value = text[match.end() : end]
        attrs[match.group(1)] = value[1:-1] if value[0] in '"' else value
        i = end
    return attrs


class Dot:
    """Nodes, edges and clusters of the DOT text that the graphviz package writes."""

    def __init__(self, source: str) -> None:
        self.graph: dict = {}
        self.nodes: dict = {}  # id -> attrs (plus "_clusters": labels of enclosing clusters)
        self.edges: list = []  # (tail, head, attrs)
        self.clusters: dict = {}  # name -> {"label", "parent"}
        stack: list = []
        for raw in source.splitlines()[1:]:
            line = raw.strip()
            if line.startswith("subgraph"):
                name = line.split()[1]
                self.clusters[name] = {"parent": stack[-1] if stack else None}
                stack.append(name)
            elif line == "}":
                if stack:
                    stack.pop()
            elif line.startswith(("node [", "edge [")):
                continue
            elif re.match(r"\w+=", line):
                target = self.clusters[stack[-1]] if stack else self.graph
                target.update(_attrs(line))
            else:
                edge = re.match(r"(\w+) -> (\w+) \[(.*)\]$", line)
                if edge:
                    self.edges.append((edge.group(1), edge.group(2), _attrs(edge.group(3))))
                    continue
                node = re.match(r"(\w+) \[(.*)\]$", line)
                assert node, f"unparsed DOT line: {line!r}"
                attrs = _attrs(node.group(2))
                attrs["_clusters"] = [self.clusters[c]["label"] for c in stack]
                self.nodes[node.group(1)] = attrs

    def colour(self, colour: str) -> list:
        return [(a, b, attrs) for a, b, attrs in self.edges if attrs.get("color") == colour]

    def labelled(self, text: str) -> list:
        """Ids of the nodes whose label has `text` as a whole line (tags stripped)."""
        return [i for i, attrs in self.nodes.items() if text in _label_lines(attrs)]

    def node_of(self, text: str) -> str:
        found = self.labelled(text)
        assert len(found) == 1, (text, found)
        return found[0]

    def gradient_targets(self) -> set:
        """Nodes a red edge points at: red edges are written tensor -> op with dir=back."""
        targets = set()
        for tail, _, attrs in self.colour(RED):
            assert attrs.get("dir") == "back"
            targets.add(tail)
        return targets


def _label_lines(attrs: dict) -> list:
    label = attrs.get("label", "")
    if label.startswith("<") and label.endswith(">"):
        label = label[1:-1]  # an HTML-like label
    return [html.unescape(re.sub(r"<[^>]*>", "", part)).strip() for part in label.split("<br/>")]


# ------------------------------------------------------------------ programs to draw
def attention_head(rng, dtype=np.float64):
    """The article's head from named raw tensors, with module scopes pushed by hand."""
    x = Tensor(rng.standard_normal((5, 4)), dtype=dtype, name="X")
    weights = {
        part: Tensor(
            rng.standard_normal((4, 4)) / 2, dtype=dtype, requires_grad=True, name=f"{part}.weight"
        )
        for part in ("query", "key", "value")
    }
    projected = {}
    for part, weight in weights.items():
        observers.scope.append(part)
        try:
            projected[part] = x @ weight.T  # (T, D)
        finally:
            observers.scope.pop()
        projected[part].name = part[0].upper()
    scores = projected["query"] @ projected["key"].T * 0.5  # (T, T)
    scores.name = "scores"
    attn = scores.softmax(axis=-1)  # (T, T)
    attn.name = "weights"
    out = attn @ projected["value"]  # (T, D)
    out.name = "attention"
    loss = (out * out).mean()
    loss.name = "loss"
    return x, weights, loss


def test_nodes_are_ops_and_tensors_with_name_shape_dtype(rng):
    x, weights, loss = attention_head(rng)
    dot = Dot(to_dot(loss))
    assert len(dot.labelled("MatMul")) == 5  # three projections, scores, weighted values
    assert len(dot.labelled("Softmax")) == 1
    assert dot.labelled("(5, 4) float64")
    x_node = dot.node_of("X")
    assert "(5, 4) float64" in _label_lines(dot.nodes[x_node])
    query = dot.node_of("query.weight")
    # parameters and inputs are drawn differently; the root has a double border
    assert dot.nodes[query]["fillcolor"] != dot.nodes[x_node]["fillcolor"]
    assert dot.nodes[dot.node_of("loss")].get("peripheries") == "2"
    constant = dot.node_of("0.5")
    assert "dashed" in dot.nodes[constant]["style"]
    assert dot.graph["rankdir"] == "LR"
    ops = [i for i in dot.nodes if i.startswith("op")]
    assert {dot.nodes[i]["shape"] for i in ops} == {"ellipse"}


def test_red_edges_reach_exactly_the_tensors_that_require_grad(rng):
    x, weights, loss = attention_head(rng)
    dot = Dot(to_dot(loss))
    graph = trace(loss)
    needs_grad = {r.id for r in graph.tensors if r.requires_grad and not r.is_root}
    reached = {n for n in dot.gradient_targets() if n.startswith("t")}
    assert reached == needs_grad
    assert dot.node_of("X") not in reached
    assert {dot.node_of(f"{p}.weight") for p in ("query", "key", "value")} <= reached
    # each green edge has a red twin on the same pair; blue edges have none
    green = {(a, b) for a, b, _ in dot.colour(GREEN)}
    red = {(a, b) for a, b, _ in dot.colour(RED)}
    blue = {(a, b) for a, b, _ in dot.colour(BLUE)}
    assert green == red
    assert not blue & red
    # blue edges leave exactly the no-grad leaves: X (three times) and the constant 0.5
    assert [a for a, _ in blue].count(dot.node_of("X")) == 3
    assert {a for a, _ in blue} == {dot.node_of("X"), dot.node_of("0.5")}


def test_every_edge_is_green_red_or_blue_and_legend_names_them(rng):
    _, _, loss = attention_head(rng)
    dot = Dot(to_dot(loss))
    assert {attrs["color"] for _, _, attrs in dot.edges} == {GREEN, RED, BLUE}
    legend = dot.graph["label"]
    for colour, words in ((GREEN, "forward"), (RED, "backward"), (BLUE, "no gradient")):
        assert colour in legend and words in legend


def test_x_times_x_shows_two_edges_each_way(rng):
    x = Tensor(rng.standard_normal(3), requires_grad=True, name="x")
    y = (x * x).sum()
    dot = Dot(to_dot(y))
    mul = dot.node_of("Mul")
    xid = dot.node_of("x")
    assert [(a, b) for a, b, _ in dot.colour(GREEN)].count((xid, mul)) == 2
    assert [(a, b) for a, b, _ in dot.colour(RED)].count((xid, mul)) == 2


@pytest.mark.parametrize("passes", ["forward", "backward"])
def test_forward_only_and_backward_only(rng, passes):
    _, _, loss = attention_head(rng)
    dot = Dot(to_dot(loss, passes=passes))
    colours = {attrs["color"] for _, _, attrs in dot.edges}
    legend = dot.graph["label"]
    if passes == "forward":
        assert colours == {GREEN, BLUE}
        assert RED not in legend and GREEN in legend
        assert dot.node_of("X")
    else:
        assert colours == {RED}
        assert GREEN not in legend and RED in legend
        assert not dot.labelled("X")  # takes no gradient: not part of the backward picture
        assert dot.node_of("query.weight") in dot.gradient_targets()


def test_unknown_option_and_bad_values_are_refused(rng):
    _, _, loss = attention_head(rng)
    with pytest.raises(TypeError, match="colour_scheme"):
        to_dot(loss, colour_scheme="dark")
    with pytest.raises(ValueError, match="passes"):
        to_dot(loss, passes="sideways")
    with pytest.raises(TypeError, match="Tensors"):
        to_dot(loss.data)


def test_same_program_gives_the_same_text(rng):
    first = to_dot(attention_head(np.random.default_rng(3))[2], show_values=True)
    gc.collect()  # different objects, different id()s
    second = to_dot(attention_head(np.random.default_rng(3))[2], show_values=True)
    assert first == second
    ids = set(Dot(first).nodes)
    assert all(re.fullmatch(r"(t|op|m)\d+", i) for i in ids)


def test_ids_follow_traversal_order(rng):
    x = Tensor(rng.standard_normal(2), requires_grad=True, name="a")
    y = (x.exp() + 1).sum()
    dot = Dot(to_dot(y))
    assert dot.node_of("a") == "t0" and dot.node_of("Exp") == "op0"
    assert dot.node_of("Sum") == "op2"


# ------------------------------------------------------------------ after backward
def test_released_graph_draws_the_same_picture(rng):
    _, weights, loss = attention_head(rng)
    before = to_dot(loss)
    loss.backward()
    assert loss.grad_fn.released
    after = to_dot(loss)
    assert after == before  # a live tensor and its released record are the same node


def test_values_and_gradients_on_nodes(rng):
    x = Tensor(np.array([1.0, 2.0, 3.0]), name="small")
    w = Tensor(rng.standard_normal((20, 3)), requires_grad=True, name="big")
    h = w @ x  # (20,)
    h.name = "h"
    loss = h.sum()
    loss.backward()
    dot = Dot(to_dot(loss, show_values=True, show_grads=True))
    small = " ".join(_label_lines(dot.nodes[dot.node_of("small")]))
    assert "[1., 2., 3.]" in small
    big = " ".join(_label_lines(dot.nodes[dot.node_of("big")]))
    assert f"max {w.data.max():.3g}" in big and f"mean {w.data.mean():.3g}" in big
    assert f"grad min {w.grad.min():.3g}" in big  # the gradient is x in every row
    h_label = " ".join(_label_lines(dot.nodes[dot.node_of("h")]))
    assert "min" in h_label  # h is still alive: its value is shown
    del h
    gc.collect()
    dot = Dot(to_dot(loss, show_values=True))
    matmul_out = [
        i
        for i in dot.nodes
        if "(20,) float32" in _label_lines(dot.nodes[i])
        or "(20,) float64" in _label_lines(dot.nodes[i])
    ]
    assert len(matmul_out) == 1
    assert "value not kept (tensor is gone)" in _label_lines(dot.nodes[matmul_out[0]])


def test_saved_arrays_and_their_size(rng):
    a = Tensor(rng.standard_normal((3, 4)), requires_grad=True, name="a")
    b = Tensor(rng.standard_normal((4, 2)), requires_grad=True, name="b")
    loss = (a @ b).sum()
    dot = Dot(to_dot(loss, show_saved=True))
    lines = _label_lines(dot.nodes[dot.node_of("MatMul")])
    assert "saved: (3, 4), (4, 2) = 160 B" in lines
    loss.backward()
    dot = Dot(to_dot(loss, show_saved=True))
    assert "saved: freed by backward" in _label_lines(dot.nodes[dot.node_of("MatMul")])


def test_creation_site_is_the_tooltip(rng):
    set_creation_site_finder(lambda: "my_model.py:42")
    observers.record_sites += 1
    try:
        x = Tensor(rng.standard_normal(3), requires_grad=True)
        y = x.tanh().sum()
    finally:
        observers.record_sites -= 1
        set_creation_site_finder(lambda: None)
    dot = Dot(to_dot(y))
    assert "my_model.py:42" in dot.nodes[dot.node_of("Tanh")]["tooltip"]


def test_intermediates_can_be_folded_into_their_ops(rng):
    _, _, loss = attention_head(rng)
    full = Dot(to_dot(loss))
    folded = Dot(to_dot(loss, intermediates=False))
    assert len(folded.nodes) < len(full.nodes)
    assert not folded.labelled("scores")
    assert folded.labelled("-> scores (5, 5) float64")  # on the Mul that made it
    assert _label_lines(folded.nodes[folded.node_of("-> scores (5, 5) float64")])[0] == "Mul"
    assert folded.node_of("loss")  # the root stays a node of its own
    assert folded.gradient_targets() >= {folded.node_of("query.weight")}


# ------------------------------------------------------------------ clusters and collapse
def nested_model(rng):
    """attn.query and attn.key inside attn, an MLP outside it; scopes pushed by hand."""
    x = Tensor(rng.standard_normal((3, 4)), name="X")
    wq = Tensor(rng.standard_normal((4, 4)), requires_grad=True, name="attn.query.weight")
    wk = Tensor(rng.standard_normal((4, 4)), requires_grad=True, name="attn.key.weight")
    wm = Tensor(rng.standard_normal((4, 2)), requires_grad=True, name="mlp.weight")
    observers.scope.append("attn")
    try:
        observers.scope.append("attn.query")
        q = x @ wq
        observers.scope[-1] = "attn.key"
        k = x @ wk
        observers.scope.pop()
        scores = (q @ k.T).softmax()  # (3, 3), made in "attn" itself
    finally:
        observers.scope.pop()
    observers.scope.append("mlp")
    try:
        h = (scores @ x @ wm).tanh()  # (3, 2)
    finally:
        observers.scope.pop()
    return h.sum()


def test_modules_are_nested_clusters(rng):
    dot = Dot(to_dot(nested_model(rng)))
    labels = {c["label"]: c for c in dot.clusters.values()}
    assert set(labels) == {"attn", "attn.query", "attn.key", "mlp"}
    parent = {
        name: dot.clusters[c["parent"]]["label"] if c["parent"] else None
        for name, c in labels.items()
    }
    assert parent == {"attn": None, "attn.query": "attn", "attn.key": "attn", "mlp": None}
    assert dot.nodes[dot.node_of("Softmax")]["_clusters"] == ["attn"]
    assert dot.nodes[dot.node_of("Tanh")]["_clusters"] == ["mlp"]
    # a parameter sits in the box of the module its name says
    assert dot.nodes[dot.node_of("attn.query.weight")]["_clusters"] == ["attn", "attn.query"]
    assert dot.nodes[dot.node_of("X")]["_clusters"] == []
    assert not Dot(to_dot(nested_model(rng), clusters=False)).clusters


def test_collapse_a_module_by_path(rng):
    loss = nested_model(rng)
    full = Dot(to_dot(loss))
    dot = Dot(to_dot(loss, collapse="attn"))
    box = dot.node_of("attn")
    assert dot.nodes[box]["shape"] == "box3d"
    assert "5 ops" in _label_lines(dot.nodes[box])  # 2 MatMul, Transpose, MatMul, Softmax
    assert not dot.labelled("Softmax") and not dot.labelled("attn.query.weight")
    assert dot.labelled("Tanh")  # mlp untouched
    assert len(dot.nodes) < len(full.nodes)
    x = dot.node_of("X")
    assert (x, box) in {(a, b) for a, b, _ in dot.colour(BLUE)}
    assert x not in dot.gradient_targets()
    assert box in dot.gradient_targets()  # its parameters get gradients
    # one edge per colour between a pair once things are merged into a box
    pairs = [(a, b, attrs["color"]) for a, b, attrs in dot.edges if box in (a, b)]
    assert len(pairs) == len(set(pairs))


def test_collapse_by_depth(rng):
    loss = nested_model(rng)
    depth1 = Dot(to_dot(loss, collapse_depth=1))
    boxes = {
        _label_lines(depth1.nodes[i])[0]: _label_lines(depth1.nodes[i])[1:]
        for i in depth1.nodes
        if i.startswith("m")
    }
    assert boxes == {
        "attn": ["5 ops", "2 parameters, 32 values"],
        "mlp": ["3 ops", "1 parameters, 8 values"],
    }
    ops = [_label_lines(depth1.nodes[i])[0] for i in depth1.nodes if i.startswith("op")]
    assert ops == ["Sum"]  # the loss was made outside every module
    depth2 = Dot(to_dot(loss, collapse_depth=2))
    boxes = {_label_lines(depth2.nodes[i])[0] for i in depth2.nodes if i.startswith("m")}
    assert boxes == {"attn.query", "attn.key"}
    assert depth2.nodes[depth2.node_of("attn.query")]["_clusters"] == ["attn"]
    assert depth2.labelled("Softmax")


def test_a_shared_constant_is_drawn_once_per_use_inside_each_module(rng):
    half = Tensor(0.5)  # one tensor object read by two modules
    x = Tensor(rng.standard_normal(3), requires_grad=True, name="x")
    outs = []
    for path in ("first", "second"):
        observers.scope.append(path)
        try:
            outs.append(x * half)
        finally:
            observers.scope.pop()
    dot = Dot(to_dot(outs[0] + outs[1]))
    constants = dot.labelled("0.5")
    assert len(constants) == 2
    assert sorted(dot.nodes[c]["_clusters"][0] for c in constants) == ["first", "second"]
    collapsed = Dot(to_dot(outs[0] + outs[1], collapse_depth=1))
    assert not collapsed.labelled("0.5")  # each went into its module's box


def test_nn_modules_draw_as_clusters_with_their_parameters():
    from tinygrad_attn import nn

    ta.manual_seed(0)
    head = nn.SelfAttention(4)
    x = Tensor(np.random.default_rng(1).standard_normal((5, 4)), name="X")
    loss = head(x).sum()
    dot = Dot(to_dot(loss))
    for part in ("query", "key", "value"):
        assert dot.nodes[dot.node_of(f"{part}.weight")]["_clusters"] == [part]
    # the outermost module (path "") is the whole picture, not a box of its own
    assert {c["label"] for c in dot.clusters.values()} == {"query", "key", "value"}
    assert dot.nodes[dot.node_of("Softmax")]["_clusters"] == []
    assert dot.node_of("X") not in dot.gradient_targets()
    collapsed = Dot(to_dot(loss, collapse=["query", "key", "value"]))
    assert not collapsed.labelled("query.weight")
    assert {_label_lines(collapsed.nodes[i])[0] for i in collapsed.nodes if i[0] == "m"} == {
        "query",
        "key",
        "value",
    }


def test_a_graph_of_thousands_of_ops_traces_without_recursion(rng):
    x = Tensor(rng.standard_normal(2), requires_grad=True, name="x")
    y = x
    for _ in range(3000):
        y = y * 1.0001  # (2,)
    loss = y.sum()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # an recursive walk would fail here
    try:
        dot = Dot(to_dot(loss, intermediates=False))
    finally:
        sys.setrecursionlimit(limit)
    assert len(dot.labelled("Mul")) == 3000


# ------------------------------------------------------------------ finding a renderer
def _fake_renderer(folder, name, log=None):
    """An executable that writes a tiny SVG (and records its arguments and stdin)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    record = f"open({str(log)!r}, 'w').write(' '.join(sys.argv[1:]) + '\\n' + data)" if log else ""
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "data = sys.stdin.read()\n"
        f"{record}\n"
        "sys.stdout.write('<svg>fake</svg>')\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No renderer anywhere: empty PATH, no interpreter scripts folder, no env var."""
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setattr(render_module, "_interpreter_script_dirs", lambda: [])
    return tmp_path


@pytest.mark.skipif(os.name == "nt", reason="shebang scripts")
def test_renderer_search_order(isolated, monkeypatch):
    assert find_renderer() is None
    pure_in_scripts = _fake_renderer(isolated / "venv_bin", "graphviz-pure")
    scripts = [str(pure_in_scripts.parent)]
    monkeypatch.setattr(render_module, "_interpreter_script_dirs", lambda: scripts)
    assert find_renderer() == str(pure_in_scripts)  # found although not on PATH
    pure_on_path = _fake_renderer(isolated / "path_a", "graphviz-pure")
    monkeypatch.setenv("PATH", str(pure_on_path.parent))
    assert find_renderer() == str(pure_in_scripts)  # this interpreter's own comes first
    dot = _fake_renderer(isolated / "path_b", "dot")
    monkeypatch.setenv("PATH", os.pathsep.join([str(pure_on_path.parent), str(dot.parent)]))
    assert find_renderer() == str(dot)  # Graphviz's dot before graphviz-pure
    chosen = _fake_renderer(isolated / "mine", "my-dot")
    monkeypatch.setenv(ENV_VAR, str(chosen))
    assert find_renderer() == str(chosen)  # the environment variable before everything
    monkeypatch.setenv(ENV_VAR, str(isolated / "no-such-program"))
    with pytest.raises(RendererNotFound, match=ENV_VAR):
        find_renderer()


@pytest.mark.skipif(os.name == "nt", reason="shebang scripts")
def test_renderer_gets_dot_on_stdin_and_layout_flags(isolated, monkeypatch, rng):
    log = isolated / "log.txt"
    monkeypatch.setenv(ENV_VAR, str(_fake_renderer(isolated / "bin", "dot-like", log)))
    _, _, loss = attention_head(rng)
    path = render_graph(loss, path=isolated / "out" / "head.svg")
    assert path.read_text() == "<svg>fake</svg>"
    args, source = log.read_text().split("\n", 1)
    assert args == "-Kdot -Tsvg"
    assert source == to_dot(loss)


def test_no_renderer_writes_the_dot_file_and_says_how_to_get_one(isolated, rng):
    _, _, loss = attention_head(rng)
    target = isolated / "pictures" / "head.png"
    with pytest.raises(RuntimeError) as err:
        render_graph(loss, path=target)
    message = str(err.value)
    assert "pip install graphviz-pure" in message and ENV_VAR in message
    assert "apt-get install graphviz" in message
    written = target.with_suffix(".dot")
    assert str(written) in message
    assert written.read_text() == to_dot(loss)
    assert not target.exists()


def test_inline_display_without_a_renderer_shows_how_to_get_one(isolated, rng):
    _, _, loss = attention_head(rng)
    bundle = draw_graph(loss)._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "pip install graphviz-pure" in bundle["text/plain"]


def test_dot_format_needs_no_renderer_and_bad_suffix_is_refused(isolated, rng):
    _, _, loss = attention_head(rng)
    path = render_graph(loss, path=isolated / "g.dot", passes="forward")
    assert path.read_text() == to_dot(loss, passes="forward")
    path = render_graph(loss, path=isolated / "graph", format="dot")
    assert path.read_text().startswith("digraph")
    with pytest.raises(ValueError, match=".svg"):
        render_graph(loss, path=isolated / "g.pdf")


# ------------------------------------------------------------------ real pictures
needs_renderer = pytest.mark.skipif(
    find_renderer() is None, reason="no Graphviz renderer (pip install graphviz-pure)"
)


@needs_renderer
def test_real_svg_and_png(tmp_path, rng):
    _, _, loss = attention_head(rng)
    loss.backward()
    svg = render_graph(loss, path=tmp_path / "head.svg", show_grads=True)
    text = svg.read_text()
    assert "<svg" in text
    for colour in (GREEN, RED, BLUE):
        assert colour in text  # hex colours survive into the picture
    assert "query.weight" in text and "Softmax" in text
    png = render_graph(loss, path=tmp_path / "head.png")
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000


@needs_renderer
def test_draw_graph_is_a_digraph_that_shows_itself_inline(rng):
    _, _, loss = attention_head(rng)
    picture = draw_graph(loss)
    assert isinstance(picture, graphviz.Digraph)
    bundle = picture._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"]
    assert picture.pipe("png")[:4] == b"\x89PNG"


@needs_renderer
def test_renderer_errors_are_reported():
    with pytest.raises(RuntimeError, match="failed"):
        run_renderer("digraph { this is not dot", "svg")


@needs_renderer
def test_examples_render(tmp_path):
    from tinygrad_attn.viz.examples import render_examples

    written = render_examples(tmp_path)
    names = sorted(p.name for p in written)
    assert names == [
        "attention_graph.png",
        "attention_graph.svg",
        "transformer_block.png",
        "transformer_block.svg",
    ]
    assert all(p.stat().st_size > 1000 for p in written)
    assert "block.attn" in (tmp_path / "transformer_block.svg").read_text()
