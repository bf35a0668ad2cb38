"""The graph renderer: what the DOT says (nodes, edge colours, legend, clusters, collapse),
that it is deterministic and still draws a released graph, and how a renderer is found."""

import gc
import html
import os
import re
import stat
import struct
import sys

import graphviz
import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import Tensor
from tinygrad_attn.format import POSITIVE, value_colour
from tinygrad_attn.state import observers, set_creation_site_finder
from tinygrad_attn.viz import (
    BLUE,
    ENV_VAR,
    GREEN,
    RED,
    RendererNotFound,
    RendererWarning,
    draw_graph,
    find_renderer,
    keep_values,
    render_graph,
    run_renderer,
    to_dot,
    trace,
)
from tinygrad_attn.viz import render as render_module
from tinygrad_attn.viz.values import kept_grad, kept_value

sys.path.insert(0, os.path.dirname(__file__))
from svg_geometry import Geometry  # noqa: E402


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
    parts = re.split(r"<br/>|</tr>", label)
    lines = [html.unescape(re.sub(r"<[^>]*>", "", part)).strip() for part in parts]
    return [line for line in lines if line]


# every primitive op, constant and intermediate: the plumbing these tests are about
PLUMBING = {"all_ops": True, "show_params": True, "max_nodes": None}


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
        observers.push_scope(part)
        try:
            projected[part] = x @ weight.T  # (T, D)
        finally:
            observers.pop_scope()
        projected[part].name = part[0].upper()
    scores = projected["query"] @ projected["key"].T * 0.5  # (T, T)
    scores.name = "scores"
    attn = scores.softmax(axis=-1)  # (T, T)
    attn.name = "weights"
    out = attn @ projected["value"]  # (T, D)
    out.name = "output"
    loss = (out * out).mean()
    loss.name = "loss"
    return x, weights, loss


def test_nodes_are_ops_and_tensors_with_name_shape_dtype(rng):
    x, weights, loss = attention_head(rng)
    dot = Dot(to_dot(loss, **PLUMBING))
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
    dot = Dot(to_dot(loss, **PLUMBING))
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
    dot = Dot(to_dot(y, **PLUMBING))
    mul = dot.node_of("Mul")
    xid = dot.node_of("x")
    assert [(a, b) for a, b, _ in dot.colour(GREEN)].count((xid, mul)) == 2
    assert [(a, b) for a, b, _ in dot.colour(RED)].count((xid, mul)) == 2


@pytest.mark.parametrize("passes", ["forward", "backward"])
def test_forward_only_and_backward_only(rng, passes):
    _, _, loss = attention_head(rng)
    dot = Dot(to_dot(loss, passes=passes, **PLUMBING))
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
        to_dot(loss.numpy())


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
    dot = Dot(to_dot(y, **PLUMBING))
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
    x = Tensor(np.array([1.0, -2.0, 3.0]), name="small")
    w = Tensor(rng.standard_normal((20, 3)), requires_grad=True, name="big")
    h = w @ x  # (20,)
    h.name = "h"
    loss = h.sum()
    loss.backward()
    dot = Dot(to_dot(loss, show_values=True, show_grads=True))
    small = dot.nodes[dot.node_of("small")]["label"]
    # a small array is a heat map in the value palette: -2 is full purple, 3 full orange
    cells = re.findall(r'bgcolor="(#[0-9a-f]{6})"', small)
    assert cells == [value_colour(v, 3.0) for v in (1.0, -2.0, 3.0)]
    assert cells[2] == POSITIVE and "-2 … 3" in _label_lines(dot.nodes[dot.node_of("small")])
    big = " ".join(_label_lines(dot.nodes[dot.node_of("big")]))  # 20 rows: too big for a map
    assert f"max {w.numpy().max():.3g}" in big and f"mean {w.numpy().mean():.3g}" in big
    assert f"grad min {w.grad.min():.3g}" in big  # the gradient is x in every row
    h_label = " ".join(_label_lines(dot.nodes[dot.node_of("→ h (20,) float64")]))
    assert "min" in h_label  # h is still alive: its value is shown
    del h
    gc.collect()
    dot = Dot(to_dot(loss, show_values=True))
    h_label = _label_lines(dot.nodes[dot.node_of("→ h (20,) float64")])
    assert "value not kept (tensor is gone)" in h_label


def test_keep_values_shows_what_backward_released(rng):
    x = Tensor(rng.standard_normal((3, 4)), name="X")
    w = Tensor(rng.standard_normal((4, 4)), requires_grad=True, name="W")
    with keep_values():
        h = (x @ w).tanh()  # (3, 4), made and dropped inside the block
        h.name = "h"
        expected = h.numpy().copy()
        loss = (h * h).sum()
        del h
        loss.backward()
    gc.collect()
    label = Dot(to_dot(loss, show_values=True, show_grads=True)).nodes
    node = [n for n in label.values() if "→ h (3, 4) float64" in _label_lines(n)][0]
    cells = re.findall(r'bgcolor="(#[0-9a-f]{6})"', node["label"])
    scale = np.abs(expected).max()
    assert cells[:12] == [value_colour(v, scale) for v in expected.reshape(-1)]
    assert "grad" in _label_lines(node)  # the gradient backward sent h: 2 h
    # outside the block nothing is recorded, and no observer is left installed
    loss2 = (x @ w).tanh().sum()
    assert kept_value(loss2.grad_fn) is None and kept_grad(loss2.grad_fn) is None
    assert not [cb for cb in observers.on_forward if cb.__module__.endswith("viz.values")]


def test_saved_arrays_and_their_size(rng):
    a = Tensor(rng.standard_normal((3, 4)), requires_grad=True, name="a")
    b = Tensor(rng.standard_normal((4, 2)), requires_grad=True, name="b")
    loss = (a @ b).sum()
    dot = Dot(to_dot(loss, show_saved=True, **PLUMBING))
    lines = _label_lines(dot.nodes[dot.node_of("MatMul")])
    assert "saved: (3, 4), (4, 2) = 160 B" in lines
    loss.backward()
    dot = Dot(to_dot(loss, show_saved=True, **PLUMBING))
    assert "saved: freed by backward" in _label_lines(dot.nodes[dot.node_of("MatMul")])


def test_creation_site_is_the_tooltip(rng):
    set_creation_site_finder(lambda: "my_model.py:42")
    observers.record_sites += 1
    observers.update()  # (the contract: `active` is recomputed after a change)
    try:
        x = Tensor(rng.standard_normal(3), requires_grad=True)
        y = x.tanh().sum()
    finally:
        observers.record_sites -= 1
        observers.update()
        set_creation_site_finder(lambda: None)
    dot = Dot(to_dot(y, **PLUMBING))
    assert "my_model.py:42" in dot.nodes[dot.node_of("Tanh")]["tooltip"]


def test_results_are_drawn_inside_their_ops_by_default(rng):
    _, _, loss = attention_head(rng)
    full = Dot(to_dot(loss, **PLUMBING))
    folded = Dot(to_dot(loss))
    assert len(folded.nodes) < len(full.nodes) / 2
    assert not folded.labelled("scores")
    scores = folded.node_of("→ scores (5, 5) float64")
    assert _label_lines(folded.nodes[scores])[0] == "Q Kᵀ / √4"  # the scale says what it is
    assert _label_lines(folded.nodes[folded.node_of("→ Q (5, 4) float64")])[0] == "X Wᵀ"
    assert folded.nodes[folded.node_of("→ loss () float64")].get("peripheries") == "2"
    assert folded.gradient_targets() >= {folded.node_of("query.weight")}
    # no Transpose is drawn, and the square of the loss is one op with one edge each way
    assert not [n for n in folded.nodes.values() if "Transpose" in _label_lines(n)[0]]
    assert _label_lines(folded.nodes[folded.node_of("→ loss () float64")])[0] == "mean(output²)"
    both = Dot(to_dot(loss, intermediates=True))
    assert both.labelled("scores") and both.labelled("Q Kᵀ / √4")


def test_x_times_x_is_one_edge_each_way_by_default(rng):
    x = Tensor(rng.standard_normal(3), requires_grad=True, name="x")
    dot = Dot(to_dot((x * x).sum()))
    square = dot.node_of("sum(x²)")
    assert [(a, b) for a, b, _ in dot.colour(GREEN)] == [(dot.node_of("x"), square)]
    assert [(a, b) for a, b, _ in dot.colour(RED)] == [(dot.node_of("x"), square)]


# ------------------------------------------------------------------ clusters and collapse
def nested_model(rng):
    """attn.query and attn.key inside attn, an MLP outside it; scopes pushed by hand."""
    x = Tensor(rng.standard_normal((3, 4)), name="X")
    wq = Tensor(rng.standard_normal((4, 4)), requires_grad=True, name="attn.query.weight")
    wk = Tensor(rng.standard_normal((4, 4)), requires_grad=True, name="attn.key.weight")
    wm = Tensor(rng.standard_normal((4, 2)), requires_grad=True, name="mlp.weight")
    observers.push_scope("attn")
    try:
        observers.push_scope("attn.query")
        q = x @ wq
        observers.scope[-1] = "attn.key"
        k = x @ wk
        observers.pop_scope()
        scores = (q @ k.T).softmax(-1)  # (3, 3), made in "attn" itself
    finally:
        observers.pop_scope()
    observers.push_scope("mlp")
    try:
        h = (scores @ x @ wm).tanh()  # (3, 2)
    finally:
        observers.pop_scope()
    return h.sum()


def test_modules_are_nested_clusters(rng):
    dot = Dot(to_dot(nested_model(rng), **PLUMBING))
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
    assert not Dot(to_dot(nested_model(rng), clusters=False, **PLUMBING)).clusters


def test_collapse_a_module_by_path(rng):
    loss = nested_model(rng)
    full = Dot(to_dot(loss, **PLUMBING))
    dot = Dot(to_dot(loss, collapse="attn", **PLUMBING))
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
    depth1 = Dot(to_dot(loss, collapse_depth=1, **PLUMBING))
    boxes = {
        _label_lines(depth1.nodes[i])[0]: _label_lines(depth1.nodes[i])[1:]
        for i in depth1.nodes
        if i.startswith("m")
    }
    assert boxes == {
        "attn": ["5 ops", "2 parameters, 32 values"],
        "mlp": ["3 ops", "1 parameter, 8 values"],
    }
    ops = [_label_lines(depth1.nodes[i])[0] for i in depth1.nodes if i.startswith("op")]
    assert ops == ["Sum"]  # the loss was made outside every module
    depth2 = Dot(to_dot(loss, collapse_depth=2, **PLUMBING))
    boxes = {_label_lines(depth2.nodes[i])[0] for i in depth2.nodes if i.startswith("m")}
    assert boxes == {"attn.query", "attn.key"}
    assert depth2.nodes[depth2.node_of("attn.query")]["_clusters"] == ["attn"]
    assert depth2.labelled("Softmax")


def test_a_shared_constant_is_drawn_once_per_use_inside_each_module(rng):
    half = Tensor(0.5)  # one tensor object read by two modules
    x = Tensor(rng.standard_normal(3), requires_grad=True, name="x")
    outs = []
    for path in ("first", "second"):
        observers.push_scope(path)
        try:
            outs.append(x * half)
        finally:
            observers.pop_scope()
    dot = Dot(to_dot(outs[0] + outs[1], **PLUMBING))
    constants = dot.labelled("0.5")
    assert len(constants) == 2
    assert sorted(dot.nodes[c]["_clusters"][0] for c in constants) == ["first", "second"]
    collapsed = Dot(to_dot(outs[0] + outs[1], collapse_depth=1, **PLUMBING))
    assert not collapsed.labelled("0.5")  # each went into its module's box


def test_nn_modules_draw_as_clusters_with_their_parameters():
    from tinygrad_attn import nn

    ta.manual_seed(0)
    head = nn.SelfAttention(4)
    x = Tensor(np.random.default_rng(1).standard_normal((5, 4)), name="X")
    loss = head(x).sum()
    dot = Dot(to_dot(loss, **PLUMBING))
    for part in ("query", "key", "value"):
        assert dot.nodes[dot.node_of(f"{part}.weight")]["_clusters"] == [f"{part} · Linear"]
    # the outermost module (path "") is the whole picture, not a box of its own; each box names
    # its module's type, which the nodes recorded (no `model=` needed)
    assert {c["label"] for c in dot.clusters.values()} == {
        "query · Linear",
        "key · Linear",
        "value · Linear",
    }
    assert dot.nodes[dot.node_of("Softmax")]["_clusters"] == []
    assert dot.node_of("X") not in dot.gradient_targets()
    collapsed = Dot(to_dot(loss, collapse=["query", "key", "value"], **PLUMBING))
    assert not collapsed.labelled("query.weight")
    assert {_label_lines(collapsed.nodes[i])[0] for i in collapsed.nodes if i[0] == "m"} == {
        "query · Linear",
        "key · Linear",
        "value · Linear",
    }


def test_module_boxes_name_their_type_without_the_model_even_for_containers():
    from tinygrad_attn import nn

    ta.manual_seed(0)
    model = nn.Sequential(nn.TransformerBlock(16, 2))
    loss = model(ta.randn(1, 4, 16)).sum()
    boxes = Dot(to_dot(loss, collapse_depth=2, **PLUMBING))
    labels = {_label_lines(boxes.nodes[i])[0] for i in boxes.nodes if i[0] == "m"}
    # 0.mlp makes no node itself (its Linear and GELU children do): its type comes from theirs
    assert {"0.attn · MultiHeadAttention", "0.mlp · Sequential", "0.ln1 · LayerNorm"} <= labels
    assert to_dot(loss) == to_dot(loss, model=model)  # `model=` adds nothing here


def test_a_graph_of_thousands_of_ops_traces_without_recursion(rng):
    x = Tensor(rng.standard_normal(2), requires_grad=True, name="x")
    y = x
    for _ in range(3000):
        y = y * 1.0001  # (2,)
    loss = y.sum()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # an recursive walk would fail here
    try:
        dot = Dot(to_dot(loss, intermediates=False, **PLUMBING))
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


@pytest.mark.skipif(os.name == "nt", reason="shebang scripts")
def test_digraph_render_uses_our_renderer(isolated, monkeypatch, rng):
    """torchviz's idiom, `make_dot(loss).render("graph", format="png")`, on our picture: the
    graphviz package alone would look only for a program called `dot`."""
    log = isolated / "log.txt"
    monkeypatch.setenv(ENV_VAR, str(_fake_renderer(isolated / "bin", "graphviz-pure", log)))
    monkeypatch.chdir(isolated)
    _, _, loss = attention_head(rng)
    picture = draw_graph(loss)
    written = picture.render("graph", format="svg")
    assert written == "graph.svg" and (isolated / "graph.svg").read_text() == "<svg>fake</svg>"
    assert (isolated / "graph").read_text() == picture.source  # graphviz keeps the DOT text
    args, source = log.read_text().split("\n", 1)
    assert args == "-Kdot -Tsvg" and source == picture.source
    written = picture.render(outfile=isolated / "pictures" / "head.svg", cleanup=True)
    assert (isolated / "pictures" / "head.svg").read_text() == "<svg>fake</svg>"
    assert written == str(isolated / "pictures" / "head.svg")
    assert not (isolated / "pictures" / "head.gv").exists()  # cleanup removed the DOT file
    with pytest.raises(graphviz.FileExistsError):
        picture.render("graph", format="svg", raise_if_result_exists=True)


def test_digraph_render_without_a_renderer_keeps_the_dot_file(isolated, monkeypatch, rng):
    monkeypatch.chdir(isolated)
    _, _, loss = attention_head(rng)
    picture = draw_graph(loss)
    with pytest.raises(RendererNotFound, match="pip install graphviz-pure"):
        picture.render("graph", format="png")
    assert (isolated / "graph").read_text() == picture.source
    assert not (isolated / "graph.png").exists()


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
    # in a notebook it fits the cell: no fixed width in points, its natural width at most
    assert re.search(r'<svg width="100%" style="max-width: [\d.]+pt', bundle["image/svg+xml"])
    assert picture.pipe("png")[:4] == b"\x89PNG"


@needs_renderer
def test_renderer_errors_are_reported():
    with pytest.raises(RuntimeError, match="failed"):
        run_renderer("digraph { this is not dot", "svg")


@needs_renderer
def test_examples_render(tmp_path):
    from tinygrad_attn.examples import render_examples

    written = render_examples(tmp_path)
    names = sorted(p.name for p in written)
    assert names == [
        "attention_graph.png",
        "attention_graph.svg",
        "backward_as_ops.png",
        "backward_as_ops.svg",
        "model_gradient.png",
        "model_gradient.svg",
        "transformer_attention.png",
        "transformer_attention.svg",
        "transformer_stack.png",
        "transformer_stack.svg",
    ]
    assert all(p.stat().st_size > 1000 for p in written)
    assert "0.attn · MultiHeadAttention" in (tmp_path / "transformer_stack.svg").read_text()


# ------------------------------------------------------------------ issue 14: the picture
@pytest.fixture(scope="module")
def article_svg():
    """The demo's picture (one training step of the article's head), as the SVG it writes."""
    from tinygrad_attn.examples import training_step_picture

    loss, options = training_step_picture()
    return run_renderer(to_dot(loss, **options), "svg").decode("utf-8")


def test_the_article_picture_has_x_left_and_q_k_v_in_one_column(article_svg):
    picture = Geometry(article_svg)
    x = picture.node_with("X")
    assert x.left / picture.width <= 0.05
    layers = [picture.node_with(f"→ {name} (6, 5)") for name in "QKV"]
    centres = [layer.centre_x for layer in layers]
    assert (max(centres) - min(centres)) / picture.width <= 0.10
    assert all(layer.left > x.right for layer in layers)  # beside X, to its right
    # then the scores, the weights, their mix with V and the loss, left to right
    steps = ["→ scores (6, 6)", "→ weights (6, 6)", "→ output (6, 5)", "→ loss ()"]
    lefts = [picture.node_with(step).left for step in steps]
    assert min(centres) < lefts[0] and lefts == sorted(lefts)


def test_the_article_picture_is_legible_880_px_wide(article_svg):
    picture = Geometry(article_svg)
    assert picture.px_at(880, picture.smallest_node_text()) >= 9


def test_the_article_picture_labels_rows_and_columns_with_the_words(article_svg):
    from tinygrad_attn.examples import SENTENCE

    picture = Geometry(article_svg)
    weights = picture.node_with("→ weights (6, 6)")
    header = weights.lines.index("→ weights (6, 6)")
    assert tuple(weights.lines[header + 1 : header + 7]) == SENTENCE  # the columns
    for word in SENTENCE:  # a column label, and a row label of the weights (and of the grads)
        assert weights.lines.count(word) >= 2, word
    for name in "XQKV":  # the row labels of the other tables
        node = picture.node_with(name) if name == "X" else picture.node_with(f"→ {name} (6, 5)")
        assert all(word in node.lines for word in SENTENCE)
    row = weights.lines.index("orange", weights.lines.index("orange") + 1)
    numbers = [float(v) for v in weights.lines[row + 1 : row + 7]]  # the "orange" row
    assert abs(sum(numbers) - 1) < 0.04  # two decimals each: the row of a softmax


def test_the_article_picture_is_the_maths_not_the_plumbing(article_svg):
    picture = Geometry(article_svg)
    assert len(picture.nodes_with(r"^Transpose")) <= 1
    assert picture.nodes_with(r"^Q Kᵀ / √5$")  # the raw Q Kᵀ and 1/√d say what they are
    assert len(picture.nodes_with(r"^X Wᵀ$")) == 3
    assert not picture.nodes_with(r"^0\.447")  # no unnamed constant node
    assert len(picture.nodes) <= 15


class Linear(ta.Function):
    """out = x W^T + b;  dx = dout W,  dW = dout^T x,  db = sum(dout)"""

    @staticmethod
    def forward(ctx, x, weight, bias):
        ctx.save_for_backward(x, weight)
        return x @ weight.T + bias

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out @ weight, grad_out.T @ x, grad_out.sum(axis=0)


def test_a_fused_linear_is_one_node_that_says_x_w_transposed_plus_b(rng):
    x = Tensor(rng.standard_normal((3, 4)), name="X")
    w = Tensor(rng.standard_normal((2, 4)), requires_grad=True, name="layer.weight")
    b = Tensor(rng.standard_normal(2), requires_grad=True, name="layer.bias")
    observers.push_scope("layer")
    try:
        out = Linear.apply(x, w, b)
    finally:
        observers.pop_scope()
    out.name = "Q"
    dot = Dot(to_dot(out.sum()))
    node = dot.node_of("→ Q (3, 2) float64")
    assert _label_lines(dot.nodes[node])[0] == "X Wᵀ + b"
    assert {dot.node_of("layer.weight"), dot.node_of("layer.bias")} <= dot.gradient_targets()


def test_every_primitive_op_on_request(rng):
    _, _, loss = attention_head(rng)
    dot = Dot(to_dot(loss, **PLUMBING))
    assert len(dot.labelled("Transpose")) == 4  # three weights and Kᵀ
    assert dot.labelled("0.5")


def test_the_legend_lists_only_what_is_drawn(rng):
    _, _, loss = attention_head(rng)
    legend = Dot(to_dot(loss)).graph["label"]
    assert "parameter" in legend and "input" in legend and "op: its formula" in legend
    assert "constant" not in legend  # written into the formula instead
    assert "collapsed module" not in legend and "module (dashed box)" in legend
    assert "double border" in legend
    assert "value &lt; 0" not in legend  # no values drawn
    forward = Dot(to_dot(loss, passes="forward")).graph["label"]
    assert "backward: gradients" not in forward and RED not in forward
    plain = Dot(to_dot((Tensor([1.0, 2.0], requires_grad=True) * 2).sum(), **PLUMBING))
    text = plain.graph["label"]
    assert "constant" in text and "module" not in text and "input" not in text
    assert Dot(to_dot(loss, show_values=True)).graph["label"].count("value &lt; 0") == 1
    assert Dot(to_dot(loss)).graph["labelloc"] == "t"  # at the start of the picture


def test_direction_top_to_bottom(rng):
    _, _, loss = attention_head(rng)
    assert Dot(to_dot(loss)).graph["rankdir"] == "LR"  # the article's head: left to right
    assert Dot(to_dot(loss, direction="TB")).graph["rankdir"] == "TB"
    stack, _ = _stack()
    assert Dot(to_dot(stack)).graph["rankdir"] == "TB"  # 14 columns: top to bottom reads better
    assert Dot(to_dot(stack, direction="LR")).graph["rankdir"] == "LR"
    with pytest.raises(ValueError, match="direction"):
        to_dot(loss, direction="RL")


def _stack(blocks=2):
    from tinygrad_attn.examples import transformer_stack_step

    return transformer_stack_step(blocks)


def test_a_two_block_transformer_is_at_most_80_nodes_by_default():
    loss, model = _stack()
    dot = Dot(to_dot(loss))
    assert len(dot.nodes) <= 80
    svg = Geometry(run_renderer(to_dot(loss, model=model), "svg").decode("utf-8"))
    assert len(svg.nodes) <= 80
    boxes = {n.lines[0] for n in svg.nodes if n.lines and " · " in n.lines[0]}
    assert {"0.attn · MultiHeadAttention", "1.mlp · Sequential", "0.ln1 · LayerNorm"} <= boxes
    attn = svg.node_with("0.attn · MultiHeadAttention")
    assert "8 parameters, 4,224 values" in attn.lines  # what it holds
    assert len(Dot(to_dot(loss, all_ops=True, max_nodes=None)).nodes) > 100  # all of it
    shown = min(880, svg.width * 4 / 3)  # the README shows it at most 880 px wide
    assert svg.px_at(shown, svg.smallest_node_text()) >= 9


def test_modules_expand_by_name_or_depth_and_unknown_names_are_refused():
    loss, model = _stack()
    opened = Dot(to_dot(loss, expand="0.attn", model=model))
    assert not opened.labelled("0.attn · MultiHeadAttention")
    boxes = [_label_lines(n)[0] for k, n in opened.nodes.items() if k[0] == "m"]
    assert "0.attn.q_proj · Linear" in boxes and any(b.startswith("1") for b in boxes)
    assert {c["label"] for c in opened.clusters.values()} >= {"0.attn · MultiHeadAttention"}
    depth1 = Dot(to_dot(loss, collapse_depth=1, model=model))
    assert {_label_lines(n)[0] for k, n in depth1.nodes.items() if k[0] == "m"} == {
        "0 · TransformerBlock",
        "1 · TransformerBlock",
    }
    with pytest.raises(ValueError, match=r"nosuchmodule.*0\.attn"):
        to_dot(loss, collapse="nosuchmodule")
    with pytest.raises(ValueError, match="expand='blocks.9'"):
        to_dot(loss, expand="blocks.9")


class _Scope(str):
    """A module path that also says the module's type (what Module.__call__ could push)."""

    module_type = "Attention"


def test_boxes_name_the_type_the_scope_carries(rng):
    x = Tensor(rng.standard_normal((3, 4)), requires_grad=True, name="x")
    observers.push_scope(_Scope("attn"))
    try:
        y = (x * 2).tanh()
    finally:
        observers.pop_scope()
    dot = Dot(to_dot(y.sum()))
    assert {c["label"] for c in dot.clusters.values()} == {"attn · Attention"}
    boxes = Dot(to_dot(y.sum(), collapse="attn"))
    assert boxes.labelled("attn · Attention")


def test_clusters_never_overlap():
    from tinygrad_attn.examples import transformer_block_step

    for loss, model in (transformer_block_step(), _stack()):
        for options in ({}, {"collapse_depth": 2}, {"all_ops": True, "max_nodes": None}):
            svg = Geometry(run_renderer(to_dot(loss, model=model, **options), "svg").decode())
            boxes = svg.clusters
            for i, a in enumerate(boxes):
                for b in boxes[i + 1 :]:
                    apart = (
                        a.right <= b.left or b.right <= a.left
                        or a.bottom <= b.top or b.bottom <= a.top
                    )  # fmt: skip
                    nested = all(getattr(a, s) <= getattr(b, s) for s in ("left", "top")) and all(
                        getattr(a, s) >= getattr(b, s) for s in ("right", "bottom")
                    )
                    inside = all(getattr(b, s) <= getattr(a, s) for s in ("left", "top")) and all(
                        getattr(b, s) >= getattr(a, s) for s in ("right", "bottom")
                    )
                    assert apart or nested or inside, (options, a.lines, b.lines)


def test_a_wide_png_is_scaled_down_or_refused_with_advice(tmp_path):
    x = Tensor([1.0, 2.0], requires_grad=True, name="x")
    y = x
    for _ in range(40):
        y = y * 1.01
    loss = y.sum()
    path = render_graph(loss, path=tmp_path / "wide.png", all_ops=True, max_png_width=3000)
    width, height = struct.unpack(">II", path.read_bytes()[16:24])
    assert 2500 < width <= 3000
    with pytest.raises(ValueError, match="collapse"):
        render_graph(loss, path=tmp_path / "wider.png", all_ops=True, max_png_width=200)


def test_what_the_renderer_says_reaches_the_user(isolated, rng):
    fake = isolated / "talky"
    fake.write_text(
        "#!/bin/sh\ncat > /dev/null\necho 'Warning: scaling down' >&2\n"
        "printf '<svg width=\"10pt\"></svg>'\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    x = Tensor(rng.standard_normal(3), requires_grad=True, name="x")
    with pytest.warns(RendererWarning, match="scaling down"):
        run_renderer(to_dot(x.sum()), "svg", str(fake))


# ------------------------------------------------------------------ changes made in place
def test_an_op_made_in_place_is_a_node_of_its_own_that_says_so(rng):
    x = Tensor(rng.standard_normal(3), requires_grad=True, name="x")
    y = x * 2  # (3,)
    y.mul_(3.0)  # recorded: y is now made by a Mul marked mul_()
    part = y[1:]  # a view of y
    part.add_(1.0)  # written through the view: y is now made by CopySlices
    dot = Dot(to_dot(y.sum()))
    first = dot.node_of("mul_ (in place)")
    assert _label_lines(dot.nodes[first])[1] == "a × 3"  # its formula, under the header
    assert dot.node_of("x × 2") != first  # the Mul before it is not folded into it
    write = dot.node_of("add_ (in place)")
    assert "a with [1:] = b" in _label_lines(dot.nodes[write])
    assert dot.labelled("a[1:] + 1")  # the slice is written as it was indexed
    lines = [str(step) for step in y.sum().backward_steps()]
    assert any(line.startswith("step 1: CopySlices (add_, in place) -> ") for line in lines)
    assert any(" Mul (mul_, in place) -> " in line for line in lines)


def test_a_graph_with_a_tensor_changed_in_place_traces_from_the_parents(rng):
    x = Tensor(rng.standard_normal((2, 3)), requires_grad=True, name="x")
    y = x.exp()
    view = y[0]
    view.mul_(2.0)  # y's node moves on; the view's old GetItem node is still in the graph
    loss = (y * 1.5).sum() + view.sum()
    traced = trace(loss)
    assert [op.node.name for op in traced.ops].count("CopySlices") == 1
    assert len(Dot(to_dot(loss, **PLUMBING)).nodes) >= len(traced.ops)


def test_an_index_is_drawn_as_written(rng):
    logits = Tensor(rng.standard_normal((2, 8, 4)), requires_grad=True, name="logits")
    assert Dot(to_dot(logits[:, 6:].sum())).labelled("sum(logits[:, 6:])")
    assert Dot(to_dot(logits[..., ::2].sum())).labelled("sum(logits[..., ::2])")


# ------------------------------------------------------------------ issue 25: axis labels
def _labelled_linear(rng):
    """X (3 words, 4 features) through a Linear to 2 named outputs."""
    x = Tensor(rng.standard_normal((3, 4)), name="X")
    w = Tensor(rng.standard_normal((2, 4)), requires_grad=True, name="layer.weight")
    out = x @ w.T  # (3, 2)
    out.name = "out"
    loss = (out * out).sum()
    labels = {"X": (("a", "b", "c"), ("f1", "f2", "f3", "f4")), "out": (None, ("y1", "y2"))}
    return loss, labels


def test_a_linear_weights_rows_are_its_outputs_and_its_columns_its_inputs(rng):
    from tinygrad_attn.viz.axes import AxisLabels

    loss, labels = _labelled_linear(rng)
    traced = trace(loss)
    axes = AxisLabels(traced, labels, "test")
    weight = next(r for r in traced.tensors if r.name == "layer.weight")
    assert axes.of(weight.id) == (("y1", "y2"), ("f1", "f2", "f3", "f4"))
    out = next(r for r in traced.tensors if r.name == "out")
    assert axes.of(out.id) == (("a", "b", "c"), ("y1", "y2"))
    # in the DOT: the weight's heat map has the outputs on its rows, the inputs on its columns
    loss.backward()
    dot = Dot(to_dot(loss, show_values=True, show_grads=True, axis_labels=labels))
    lines = _label_lines(dot.nodes[dot.node_of("layer.weight")])  # (a table row a line)
    header = lines.index("(2, 4) float64")
    assert lines[header + 1 : header + 4] == ["f1f2f3f4", "y1", "y2"]  # inputs across, outputs down
    grad = lines.index("grad")  # the gradient is labelled like its tensor
    assert lines[grad + 1 : grad + 4] == ["f1f2f3f4", "y1", "y2"]


def test_the_article_head_labels_each_axis_by_what_it_is():
    from tinygrad_attn.examples import FEATURES, QK_DIMS, SENTENCE, training_step_picture

    loss, options = training_step_picture()
    dot = Dot(to_dot(loss, **options))
    short = "rfcpb"  # the features, by their first letters (a table row is one line) ...
    assert "columns: " + ", ".join(FEATURES) in html.unescape(dot.graph["label"])  # ... spelled out
    x = _label_lines(dot.nodes[dot.node_of("X")])
    assert x[2:5] == [short, *SENTENCE[:2]]  # X: features across, words down
    for name in ("query", "key"):
        weight = _label_lines(dot.nodes[dot.node_of(f"{name}.weight")])
        assert weight[2:5] == [short, *QK_DIMS[:2]]  # inputs across, outputs down
    value = _label_lines(dot.nodes[dot.node_of("value.weight")])
    assert value[2:5] == [short, *FEATURES[:2]]  # V's outputs: the target's features


def test_axis_labels_are_checked_against_the_graph(rng):
    loss, labels = _labelled_linear(rng)
    with pytest.raises(TypeError, match="per tensor, by its name"):
        to_dot(loss, axis_labels={3: ("a", "b", "c")})
    unknown = "names 'Y', but no tensor of this graph is called that.*X, layer.weight, out"
    with pytest.raises(ValueError, match=unknown):
        to_dot(loss, axis_labels={"Y": (None,)})
    with pytest.raises(ValueError, match=r"has 1 entries, but X has shape \(3, 4\)"):
        to_dot(loss, axis_labels={"X": (("a", "b", "c"),)})
    with pytest.raises(ValueError, match="gives 2 labels for axis 0 of X"):
        to_dot(loss, axis_labels={"X": (("a", "b"), None)})


def test_labels_follow_transposes_products_slices_and_reductions(rng):
    from tinygrad_attn.viz.axes import AxisLabels

    q = Tensor(rng.standard_normal((3, 2)), requires_grad=True, name="q")
    k = Tensor(rng.standard_normal((4, 2)), requires_grad=True, name="k")
    scores = q @ k.T  # (3, 4): q's rows against k's rows
    scores.name = "scores"
    tail = scores[:, 1:]  # (3, 3)
    tail.name = "tail"
    total = tail.sum(axis=0)  # (3,)
    total.name = "total"
    words = {"q": (("a", "b", "c"), None), "k": (("w", "x", "y", "z"), ("d1", "d2"))}
    traced = trace(total.sum())
    axes = AxisLabels(traced, words, "test")
    named = {r.name: axes.of(r.id) for r in traced.tensors if r.name}
    assert named["scores"] == (("a", "b", "c"), ("w", "x", "y", "z"))
    assert named["q"] == (("a", "b", "c"), ("d1", "d2"))  # the axis the product sums over
    assert named["tail"] == (("a", "b", "c"), ("x", "y", "z"))  # sliced with its labels
    assert named["total"] == (("x", "y", "z"),)


def test_an_expanded_transformer_block_shows_its_attention_core():
    loss, model = _stack()
    for expand in ("0.attn", "0"):
        dot = Dot(to_dot(loss, expand=expand, model=model))
        (core,) = [n for n in dot.nodes.values() if _label_lines(n)[0].startswith("softmax(")]
        lines = _label_lines(core)
        assert lines[0] == "softmax(Q Kᵀ / √16) V"  # the fused op's formula, as its title
        assert lines[1] == "+ 8 reshapes and transposes"  # the heads split and merged around it
        assert "0.attn · MultiHeadAttention" in core["_clusters"]
    default = Dot(to_dot(loss, model=model))  # collapsed: the block is a box of its own
    assert not [n for n in default.nodes.values() if "softmax" in _label_lines(n)[0]]


def test_a_collapsed_modules_output_is_named_by_its_path():
    loss, model = _stack()
    dot = Dot(to_dot(loss, collapse_depth=1, model=model))
    assert dot.labelled("sum(module 1)")  # nn.Sequential's child "1", not a bare "1"
