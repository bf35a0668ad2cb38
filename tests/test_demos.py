"""The demos, as they are run: the article's attention tables say what the article says
(`tinygrad_attn.examples`), the demo scripts train to their accuracy (run as scripts, with
small seeded settings), and `python -m tinygrad_attn demo` writes its pictures."""

import contextlib
import io
import re
import runpy
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import examples

ROOT = Path(__file__).resolve().parent.parent
DEMOS = ROOT / "demos"


def run_demo(script: str, *argv: str) -> tuple[object, str]:
    """Run `demos/<script>` as `python <script> argv...` would, in this process; return what
    its main() returned and what it printed."""
    namespace = runpy.run_path(str(DEMOS / script), run_name="demo_under_test")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = namespace["main"](list(argv))
    return result, printed.getvalue()


def load_demo(script: str) -> dict:
    """The demo's functions and classes (its file run without calling main)."""
    return runpy.run_path(str(DEMOS / script), run_name="demo_under_test")


# ----------------------------------------------------------------------- the article
def test_plain_attention_gives_the_two_oranges_different_context():
    earth, colour = (examples.similarity_attention(s) for s in examples.SENTENCES)
    assert earth.tokens == ["the", "earth", "is", "like", "an", "orange"]
    assert tuple(earth.tokens) == examples.SENTENCE
    np.testing.assert_allclose(earth.weights.sum(-1), 1, rtol=1e-6)
    assert earth.attends("orange")[0][0] == "earth"
    assert colour.attends("orange")[0][0] == "bright"
    fruit_orange = earth.mixed[earth.tokens.index("orange")]
    colour_orange = colour.mixed[colour.tokens.index("orange")]
    planet, col = examples.FEATURES.index("planet"), examples.FEATURES.index("colour")
    assert fruit_orange[planet] > colour_orange[planet]
    assert colour_orange[col] > fruit_orange[col]


def test_format_table_labels_rows_and_columns():
    text = examples.format_table(np.array([[0.25, 0.75]]), ["orange"], ["earth", "is"], "title")
    assert text.splitlines() == ["title", "         earth    is", "orange    0.25  0.75"]


def test_trained_head_attends_to_the_disambiguating_words():
    head = examples.new_head(0)
    losses = examples.train_article_head(head)
    assert losses[-1] < 1e-3 < losses[0]
    earth, colour = (examples.head_attention(head, s) for s in examples.SENTENCES)
    assert earth.attends("orange")[0][0] == "earth"
    assert colour.attends("orange")[0][0] in ("bright", "color")


@pytest.mark.parametrize("seed", range(10))
def test_the_head_learns_its_context_from_most_seeds(seed):
    """Not one lucky seed: seeds 0-9 all end with "orange" on its context (>= 0.6)."""
    head = examples.new_head(seed)
    examples.train_article_head(head)
    earth, colour = (examples.head_attention(head, s) for s in examples.SENTENCES)
    row = colour.weights[colour.tokens.index("orange")]
    assert dict(earth.attends("orange"))["earth"] >= 0.6
    assert row[colour.tokens.index("bright")] + row[colour.tokens.index("color")] >= 0.6


def test_the_targets_ask_for_one_sense_and_not_the_other():
    fruit, colour = (examples.FEATURES.index(f) for f in ("fruit", "colour"))
    first, second, alone = (examples.sense_target(s) for s in examples.TRAINING)
    assert first[fruit] == 1 and first[colour] == -1 and second[colour] == 1
    assert second[fruit] == -1 and not alone.any()


def test_head_gradients_check():
    assert examples.check_head_gradients()


def test_training_step_picture_keeps_the_values_backward_released():
    loss, options = examples.training_step_picture()
    assert loss.grad_fn.released
    from tinygrad_attn.viz import to_dot

    dot = to_dot(loss, **options)
    assert "value not kept" not in dot
    assert dot.count("orange") >= 2 * 6  # the word labels rows of every table


# ----------------------------------------------------------------------- the demo scripts
def test_orange_demo_reaches_95_percent_held_out():
    accuracy, printed = run_demo("02_learning_orange.py", "--steps", "60")
    assert accuracy >= 0.95
    assert f"held-out accuracy {accuracy:.1%} after 60 steps" in printed
    assert "(true: " in printed and "orange" in printed


def test_orange_data_has_one_orange_and_a_context_word():
    from tinygrad_attn.examples import orange as demo

    ids, position, label = demo.orange_sentences(50, seed=3)
    vocab = demo.VOCAB
    orange = vocab.index("orange")
    assert np.all(ids[np.arange(50), position] == orange)
    assert np.all((ids == orange).sum(axis=1) == 1)
    for row, sense in zip(ids, label):
        words = {vocab[t] for t in row}
        mine = demo.FRUIT_WORDS if sense == 0 else demo.COLOUR_WORDS
        other = demo.COLOUR_WORDS if sense == 0 else demo.FRUIT_WORDS
        assert words & set(mine) and not words & set(other)


def test_reverse_demo_reaches_95_percent_small():
    args = ["--steps", "120", "--digits", "3", "--embed-dim", "16", "--layers", "1"]
    accuracy, printed = run_demo("03_causal_transformer.py", *args, "--test-size", "200")
    assert accuracy >= 0.95
    assert "ok" in printed and "held-out sequences reversed exactly" in printed


def test_reverse_examples_and_decoding_shapes():
    demo = load_demo("03_causal_transformer.py")
    seq = demo["reverse_examples"](np.random.default_rng(0), 4, 3)
    assert seq.shape == (4, 7)
    np.testing.assert_array_equal(seq[:, 4:], seq[:, 2::-1])
    assert np.all(seq[:, 3] == demo["SEPARATOR"])
    ta.manual_seed(0)
    model = demo["TinyTransformer"](11, 7, embed_dim=8, num_heads=2, num_layers=1)
    assert demo["generate"](model, seq[:, :3]).shape == (4, 3)


@pytest.mark.parametrize("script", ["01_article_walkthrough.py", "02_learning_orange.py"])
def test_fast_demo_scripts_run(script):
    done = subprocess.run(
        [sys.executable, str(DEMOS / script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "orange" in done.stdout


# ----------------------------------------------------------------------- the demo command
def test_run_prints_tables_and_writes_pictures(tmp_path, capsys):
    assert examples.run(str(tmp_path)) == 0
    printed = capsys.readouterr().out
    assert "'orange' attends most (besides itself) to: earth" in printed
    assert "the  earth     is   like     an orange" in printed
    for suffix in (".svg", ".png"):
        assert (tmp_path / f"attention_graph{suffix}").stat().st_size > 1000
    svg = (tmp_path / "attention_graph.svg").read_text()
    assert "query.weight" in svg and "softmax(scores)" in svg


def test_demo_05_writes_its_files_under_out_not_into_the_current_folder(tmp_path):
    done = subprocess.run(
        [sys.executable, str(DEMOS / "05_nanogpt_style.py"), "--steps", "2"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert {p.name for p in (tmp_path / "out").iterdir()} == {
        "nanogpt_graph.svg",
        "nanogpt_backward.html",
    }


def test_demo_07_computes_h_v_that_central_differences_confirm(tmp_path):
    """demos/07_backward_is_a_graph.py, as a reader runs it: H v (two ways) agrees with central
    differences of the gradient, the Newton step does what the quadratic model predicts, and
    the gradient's picture is written."""
    done = subprocess.run(
        [sys.executable, str(DEMOS / "07_backward_is_a_graph.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout
    assert "query.weight.grad.grad_fn: <Transpose node" in printed
    errors = re.findall(r"max \|H v - central differences\| = ([\d.e+-]+)", printed)
    largest = float(re.search(r"the largest entry of H v is ([\d.e+-]+)", printed).group(1))
    assert len(errors) == 2 and largest > 1e-5
    assert all(float(error) < 1e-7 * largest for error in errors), printed
    drop = re.search(r"predicted a drop of ([\d.e+-]+), the step gave ([\d.e+-]+)", printed)
    predicted, actual = (float(x) for x in drop.groups())
    assert 0 < actual and abs(actual - predicted) < 0.1 * predicted
    for suffix in (".svg", ".png"):
        assert (tmp_path / f"backward_as_ops{suffix}").stat().st_size > 1000
    assert "from the backward of softmax" in (tmp_path / "backward_as_ops.svg").read_text()
