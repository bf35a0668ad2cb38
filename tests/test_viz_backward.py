"""The backward pass drawn as ops: the picture of a gradient made with `create_graph=True`
(viz/picture.py, viz/dot.py) and the replay of a second-order quantity's backward
(viz/replay.py), checked in the DOT text, the page's data and a headless Chromium."""

import json
import re

import numpy as np
import pytest
from _browser import headless_chromium
from test_viz import Dot, _label_lines

import tinygrad_attn as ta
from tinygrad_attn.examples import article
from tinygrad_attn.viz import BLUE, GREEN, RED, DrawOptions, replay_backward, to_dot, trace
from tinygrad_attn.viz.dot import drawn_ids

ALL_OPS = {"all_ops": True, "max_nodes": None}
BACKWARD_OP = "op of the backward pass"


def cubic():
    """x.grad of sum(x * x * x) with create_graph=True: 3x², as the ops that made it."""
    x = ta.tensor([1.0, 2.0, 3.0], dtype=ta.float64, requires_grad=True)
    x.name = "x"
    (x * x * x).sum().backward(create_graph=True)
    return x, x.grad


def head_gradient():
    """The article's head (value.weight nonzero, so every gradient is) on its first sentence:
    the loss, the head and query.weight.grad with its graph."""
    previous = ta.get_default_dtype()
    ta.set_default_dtype(np.float64)
    try:
        head = article.new_head(0)
        ta.nn.init.normal_(head.value.weight, 0, 0.3)
        loss = article.sense_loss(head, article.SENTENCES[0])
    finally:
        ta.set_default_dtype(previous)
    loss.backward(create_graph=True)
    return loss, head, head.query.weight.grad


def backward_made(graph) -> set[str]:
    return {op.id for op in graph.ops if op.node.made_by is not None}


def marked(dot: Dot) -> set[str]:
    """The nodes drawn as ops of a backward pass: red border, penwidth 2."""
    return {n for n, a in dot.nodes.items() if a.get("color") == RED and a.get("penwidth") == "2"}


# ------------------------------------------------------------------ the picture of a gradient
@pytest.mark.parametrize("make", [cubic, head_gradient])
def test_exactly_the_ops_a_backward_made_are_marked(make):
    gradient = make()[-1]
    graph = trace(gradient)
    made = backward_made(graph)
    assert made and len(made) < len(graph.ops)  # forward ops too: the values it reads
    dot = Dot(to_dot(gradient, **ALL_OPS))
    assert marked(dot) == made
    for node in made:
        lines = _label_lines(dot.nodes[node])
        assert any(line.startswith(("from the backward of ", "the engine: ")) for line in lines)
    for op in graph.ops:
        if op.id not in made:
            assert dot.nodes[op.id]["color"] == "#666666"


def test_the_cubic_reads_as_its_derivative():
    x, gradient = cubic()
    dot = Dot(to_dot(gradient))
    assert len(marked(dot)) == 6  # c × x, g × x twice, c × a, two sums of gradients
    assert len(dot.labelled("g × x")) == 2 and dot.labelled("c × a") and dot.labelled("c × x")
    assert len(dot.labelled("the engine: sum of gradients")) == 2
    assert dot.node_of("x²") not in marked(dot)  # the forward value the backward reads
    seed = dot.node_of("c")  # what sum's backward sent: ones, computed without a graph
    assert "= [1., 1., 1.]" in _label_lines(dot.nodes[seed])
    root = dot.node_of("→ x.grad (3,) float64")
    assert root in marked(dot) and dot.nodes[root]["peripheries"] == "2"
    np.testing.assert_allclose(gradient.numpy(), 3 * x.numpy() ** 2)


def test_a_gradients_picture_draws_its_own_pass_only_by_default():
    _, _, gradient = head_gradient()
    dot = Dot(to_dot(gradient))
    graph = trace(gradient)
    ids = drawn_ids(graph, DrawOptions())
    backward_nodes = {ids.nodes[op] for op in backward_made(graph)}
    assert not any(a.get("dir") == "back" for _, _, a in dot.edges)  # no twins
    for tail, _, attrs in dot.edges:  # red: out of the backward's ops, the way it flows
        assert (attrs["color"] == RED) == (tail in backward_nodes), (tail, attrs)
        assert attrs.get("style") != "dashed"
    assert dot.colour(GREEN) and dot.colour(BLUE)  # the forward values it reads, X
    legend = dot.graph["label"]
    assert BACKWARD_OP in legend and "backward: gradients" in legend
    assert '&#8594;</b></font></td><td align="left"><font color="#d62728">backward' in legend
    assert "here, the gradient" in legend


def test_the_default_grouping_never_mixes_the_program_and_the_backward():
    _, _, gradient = head_gradient()
    graph = trace(gradient)
    ids = drawn_ids(graph, DrawOptions())
    made_by: dict[str, set] = {}
    for op in graph.ops:
        made_by.setdefault(ids.nodes[op.id], set()).add(op.node.made_by)
    assert all(len(kinds) == 1 for kinds in made_by.values()), made_by
    dot = Dot(to_dot(gradient))
    assert len(marked(dot)) == sum(None not in kinds for kinds in made_by.values()) == 11
    softmax = dot.node_of("g − (weights × sum(g))")  # Sum, Mul, Sub of softmax's backward
    assert "from the backward of softmax" in _label_lines(dot.nodes[softmax])
    assert dot.labelled("g × weights") and dot.labelled("g Vᵀ")
    # two matmuls' backwards (of Q Kᵀ and of X Wqᵀ) stay two nodes
    assert dot.labelled("g K") and dot.labelled("Xᵀ g") and dot.labelled("Q Kᵀ / √5")
    assert "the engine: sum of gradients" in _label_lines(dot.nodes[dot.node_of("g + g₂")])
    assert dot.node_of("→ query.weight.grad (5, 5) float64") in marked(dot)
    assert dot.nodes[dot.node_of("Xᵀ")]["fillcolor"] == dot.nodes[dot.node_of("X")]["fillcolor"]
    assert "= [0.2, 0.2, 0.2, 0.2, 0.2]" in _label_lines(dot.nodes[dot.node_of("c")])


def test_passes_given_are_honoured():
    _, _, gradient = head_gradient()
    both = Dot(to_dot(gradient, passes="both"))
    twins = [a for _, _, a in both.edges if a.get("dir") == "back"]
    dashed = [a for _, _, a in both.edges if a.get("style") == "dashed"]
    assert twins and dashed and all(a["color"] == RED for a in twins + dashed)
    assert "a gradient made by a backward, as a value" in both.graph["label"]
    forward = to_dot(gradient, passes="forward")
    assert forward == to_dot(gradient)
    backward = Dot(to_dot(gradient, passes="backward"))
    assert {a["color"] for _, _, a in backward.edges} == {RED}
    assert BACKWARD_OP in backward.graph["label"]  # its ops are drawn: the entry too


def test_an_ordinary_graph_is_drawn_as_before():
    loss, _, _ = head_gradient()  # its forward graph: no op of it was made by a backward
    text = to_dot(loss)
    assert text == to_dot(loss, passes="both")  # the default is both, as it was
    assert BACKWARD_OP not in text and 'penwidth="2"' not in text and "style=dashed" not in text
    x = ta.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = (x * x).sum()
    before = to_dot(y, **ALL_OPS)
    y.backward(create_graph=True)  # the graph it drew is unchanged by what backward recorded
    assert to_dot(y, **ALL_OPS) == before


def test_an_op_computed_from_a_gradient_is_an_ordinary_op():
    _, head, gradient = head_gradient()
    v = ta.tensor(np.ones((5, 5)))
    v.name = "v"
    hv = (gradient * v).sum()
    dot = Dot(to_dot(hv))
    node = dot.node_of("sum(query.weight.grad × v)")
    assert node not in marked(dot) and dot.nodes[node]["peripheries"] == "2"
    into = {dot.nodes[t]["label"]: a["color"] for t, h, a in dot.edges if h == node}
    assert sorted(into.values()) == sorted([RED, BLUE])  # the gradient, and v
    assert "backward starts here" in dot.graph["label"]  # hv's own backward would start here


def block_gradient():
    """x.grad of a transformer block's sum of squares, with create_graph=True."""
    ta.manual_seed(0)
    block = ta.nn.TransformerBlock(8, 2)
    x = ta.randn(1, 4, 8, requires_grad=True)
    x.name = "x"
    (block(x) ** 2).sum().backward(create_graph=True)
    return block, x.grad


def test_a_modules_backward_ops_keep_its_path():
    _, gradient = block_gradient()
    graph = trace(gradient)
    forward = {op.node.scope for op in graph.ops if op.node.made_by is None}
    made = [op for op in graph.ops if op.node.made_by is not None]
    assert {op.node.scope for op in made} == (forward - {""}) | {None}  # pow's is in no module
    fused = [op for op in made if op.node.made_by == "ScaledDotProductAttention.backward"]
    assert fused and {op.node.scope for op in fused} == {"attn"}


def test_a_backward_run_inside_a_module_files_its_ops_under_the_ops_modules():
    """The module that calls backward is not the one whose ops are differentiated."""

    class GradientOf(ta.nn.Module):  # d(sum(layer(x)²))/dx, computed inside forward
        def __init__(self):
            super().__init__()
            self.layer = ta.nn.Linear(3, 3)

        def forward(self, x):
            y = (self.layer(x) ** 2).sum()
            return ta.autograd.grad(y, x, create_graph=True)[0]

    model = ta.nn.Sequential(GradientOf())
    x = ta.randn(2, 3, requires_grad=True)
    graph = trace(model(x))
    made = {op.node.made_by: op.node.scope for op in graph.ops if op.node.made_by}
    assert made["Linear.backward"] == "0.layer"  # the Linear's, though "0" was running
    assert made["Pow.backward"] == "0"


def test_a_collapsed_modules_backward_is_a_red_box_of_its_own():
    block, gradient = block_gradient()
    dot = Dot(to_dot(gradient))  # 100 nodes with every op: collapsed to fit max_nodes
    assert len(dot.nodes) <= DrawOptions().max_nodes + 1  # (+ the legend)
    backward_boxes = {n for n in marked(dot) if "its backward" in str(dot.nodes[n]["label"])}
    headers = {_label_lines(dot.nodes[n])[0] for n in backward_boxes}
    assert headers == {
        "ln1 · LayerNorm",
        "attn · MultiHeadAttention",
        "ln2 · LayerNorm",
        "mlp · Sequential",
    }
    for node in backward_boxes:
        assert dot.nodes[node]["shape"] == "box3d" and dot.nodes[node]["_clusters"] == []
        ops = _label_lines(dot.nodes[node])[1]
        assert re.fullmatch(r"its backward: \d+ ops", ops)
    # the module's forward box counts its forward ops only: as in the forward graph's picture
    out = block(ta.randn(1, 4, 8))
    forward_boxes = Dot(to_dot(out, collapse_depth=1))
    for header in headers:
        (mine,) = dot.labelled(header) and [
            n for n in dot.labelled(header) if n not in backward_boxes
        ]
        (theirs,) = forward_boxes.labelled(header)
        assert _label_lines(dot.nodes[mine])[1] == _label_lines(forward_boxes.nodes[theirs])[1]
    into_attn_backward = [
        a["color"]
        for t, h, a in dot.edges
        if h in backward_boxes and "attn" in _label_lines(dot.nodes[h])[0]
    ]
    assert RED in into_attn_backward and GREEN in into_attn_backward


def test_expanding_a_module_opens_its_backward_too():
    _, gradient = block_gradient()
    dot = Dot(to_dot(gradient, collapse_depth=1, expand=("attn",)))
    labels = [" ".join(_label_lines(a)) for a in dot.nodes.values()]
    assert not dot.labelled("attn · MultiHeadAttention")  # open: neither pass is a box
    assert dot.labelled("from the backward of the fused attention")
    assert any(re.fullmatch(r"attn.q_proj · Linear its backward: \d ops", t) for t in labels)
    assert any("ln1 · LayerNorm its backward" in text for text in labels)


# ------------------------------------------------------------------ the replay page
def page_data(path) -> dict:
    text = path.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="rp-data">(.*?)</script>', text, re.S)
    return json.loads(match.group(1))


@pytest.fixture(scope="module")
def second_order_page(tmp_path_factory):
    """The replay of hv = sum(query.weight.grad * v)'s backward: query.weight.grad is H v."""
    _, head, gradient = head_gradient()
    v = ta.tensor(np.random.default_rng(0).standard_normal((5, 5)))
    v.name = "v"
    hv = (gradient * v).sum()
    (expected,) = ta.autograd.grad(hv, head.query.weight, retain_graph=True)
    made = len(backward_made(trace(hv)))
    head.zero_grad()
    path = replay_backward(hv, tmp_path_factory.mktemp("replay") / "hv.html", max_nodes=None)
    return path, head, expected, made


def test_a_second_order_backward_replays_with_the_backward_ops_marked(second_order_page):
    path, head, expected, made = second_order_page
    np.testing.assert_allclose(head.query.weight.grad.numpy(), expected.numpy(), rtol=1e-12)
    data = page_data(path)
    steps = data["steps"]
    assert sum(step["made_by"] is not None for step in steps) == made > 0
    assert data["backward_edges"]  # the replayed pass: red twins over every op
    svg = path.read_text(encoding="utf-8")
    for step in steps:
        element = re.search(rf'<g id="{step["node"]}" class="node">.*?</g>', svg, re.S).group(0)
        is_marked = 'stroke="#d62728"' in element and 'fill="#fdeceb"' in element
        assert is_marked == (step["made_by"] is not None), step["node"]
    assert 'stroke-dasharray="5,2"' in svg  # the first backward's gradients, as values


def test_a_second_order_replay_runs_in_the_browser(second_order_page):
    path, *_ = second_order_page
    steps = page_data(path)["steps"]
    first = 1 + next(i for i, step in enumerate(steps) if step["made_by"] is not None)
    with headless_chromium("replay-hv-", "1400,900") as driver:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        driver.get(path.resolve().as_uri())
        body = driver.find_element(By.TAG_NAME, "body")
        for _ in range(first):
            body.send_keys(Keys.ARROW_RIGHT)
        panel = driver.find_element(By.ID, "rp-panel").text
        assert "an op of an earlier backward pass (create_graph=True): from the backward" in panel
        body.send_keys(Keys.END)
        counter = driver.find_element(By.ID, "rp-counter").text
        assert counter.endswith(f"{len(steps)} of {len(steps)} run")
        assert [e for e in driver.get_log("browser") if e["level"] == "SEVERE"] == []


def test_a_fused_ops_backward_computing_its_forward_again_makes_values_not_gradients():
    """LayerNorm's backward records its forward again (clone, mean, var) and differentiates
    that: those ops are the backward's (marked), but what they make are values (green edges,
    lettered a, b), and the gradient (red, g) starts at the seed's share."""
    x = ta.tensor(np.random.default_rng(1).standard_normal((3, 6)), requires_grad=True)
    x.name = "x"
    (ta.nn.functional.layer_norm(x, (6,)) ** 2).sum().backward(create_graph=True)
    dot = Dot(to_dot(x.grad))
    clone = dot.node_of("clone(x)")
    centred = dot.node_of("a − mean(a)")
    assert {clone, centred} <= marked(dot)
    assert "from the backward of layer_norm" in _label_lines(dot.nodes[clone])
    out_of_clone = {a["color"] for t, _, a in dot.edges if t == clone}
    assert out_of_clone == {GREEN}
    reds = {t for t, _, a in dot.edges if a["color"] == RED}
    assert reds and reds <= marked(dot) and clone not in reds and centred not in reds
