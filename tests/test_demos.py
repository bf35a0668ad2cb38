"""The demos: the article's attention tables say what the article says, the training runs reach
their accuracy (small, seeded settings), and `demo.run` writes its pictures."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinygrad_attn as ta
from tinygrad_attn import demo, nn

ROOT = Path(__file__).resolve().parent.parent


def test_plain_attention_gives_the_two_oranges_different_context():
    earth, colour = (demo.similarity_attention(s) for s in demo.SENTENCES)
    assert earth.tokens == ["the", "earth", "is", "like", "an", "orange"]
    np.testing.assert_allclose(earth.weights.sum(-1), 1, rtol=1e-6)
    assert earth.attends("orange")[0][0] == "earth"
    assert colour.attends("orange")[0][0] == "bright"
    fruit_orange = earth.mixed[earth.tokens.index("orange")]
    colour_orange = colour.mixed[colour.tokens.index("orange")]
    planet, col = demo.FEATURES.index("planet"), demo.FEATURES.index("colour")
    assert fruit_orange[planet] > colour_orange[planet]
    assert colour_orange[col] > fruit_orange[col]


def test_format_table_labels_rows_and_columns():
    text = demo.format_table(np.array([[0.25, 0.75]]), ["orange"], ["earth", "is"], "title")
    assert text.splitlines() == ["title", "         earth    is", "orange    0.25  0.75"]


def test_trained_head_attends_to_the_disambiguating_words():
    ta.manual_seed(0)
    head = nn.SelfAttention(len(demo.FEATURES))
    losses = demo.train_article_head(head, steps=150)
    assert losses[-1] < 1e-3 < losses[0]
    earth, colour = (demo.head_attention(head, s) for s in demo.SENTENCES)
    assert earth.attends("orange")[0][0] == "earth"
    assert colour.attends("orange")[0][0] in ("bright", "color")


def test_head_gradients_check():
    assert demo.check_head_gradients()


def test_orange_model_reaches_95_percent_held_out():
    result = demo.train_orange(steps=60, seed=0)
    assert result.accuracy >= 0.95
    line = demo.orange_attention(result.model, demo.make_orange_data(1, seed=5), 0)
    assert "orange" in line and "(true: " in line


def test_orange_data_has_one_orange_and_a_context_word():
    data = demo.make_orange_data(50, seed=3)
    orange = demo.VOCAB.index("orange")
    assert np.all(data.ids[np.arange(50), data.position] == orange)
    assert np.all((data.ids == orange).sum(axis=1) == 1)
    for ids, label in zip(data.ids, data.label):
        words = {demo.VOCAB[t] for t in ids}
        sense = demo.FRUIT_WORDS if label == 0 else demo.COLOUR_WORDS
        other = demo.COLOUR_WORDS if label == 0 else demo.FRUIT_WORDS
        assert words & set(sense) and not words & set(other)


def test_reverse_transformer_reaches_95_percent_small():
    result = demo.train_reverse(steps=120, digits=3, embed_dim=16, num_layers=1, test_size=200)
    assert result.accuracy >= 0.95
    assert "ok" in demo.show_reversals(result.model, digits=3, count=2)


def test_reverse_examples_and_decoding_shapes():
    seq = demo.reverse_examples(np.random.default_rng(0), 4, 3)
    assert seq.shape == (4, 7)
    np.testing.assert_array_equal(seq[:, 4:], seq[:, 2::-1])
    assert np.all(seq[:, 3] == demo.SEPARATOR)
    ta.manual_seed(0)
    model = demo.TinyTransformer(11, 7, embed_dim=8, num_heads=2, num_layers=1)
    assert demo.generate_reverse(model, seq[:, :3]).shape == (4, 3)


def test_run_prints_tables_and_writes_pictures(tmp_path, capsys):
    assert demo.run(str(tmp_path)) == 0
    printed = capsys.readouterr().out
    assert "'orange' attends most (besides itself) to: earth" in printed
    assert "the  earth     is   like     an orange" in printed
    for suffix in (".svg", ".png"):
        assert (tmp_path / f"attention_graph{suffix}").stat().st_size > 1000
    svg = (tmp_path / "attention_graph.svg").read_text()
    assert "query.weight" in svg and "Softmax" in svg


@pytest.mark.parametrize("script", ["01_article_walkthrough.py", "02_learning_orange.py"])
def test_fast_demo_scripts_run(script):
    done = subprocess.run(
        [sys.executable, str(ROOT / "demos" / script)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert "orange" in done.stdout
