"""The command line: `python -m tinygrad_attn COMMAND` dispatches and reports in one line."""

import subprocess
import sys

from tinygrad_attn.__main__ import main


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "demo" in capsys.readouterr().out


def test_gradcheck_passes_its_own_options_through(capsys):
    assert main(["gradcheck", "--list"]) == 0
    listed = capsys.readouterr().out
    assert "MatMul" in listed and "nn.TransformerBlock" in listed
    assert main(["gradcheck", "Softmax", "--seed", "1"]) == 0
    assert "Softmax" in capsys.readouterr().out


def test_gradcheck_unknown_op_is_a_usage_error(capsys):
    assert main(["gradcheck", "NoSuchOp"]) == 2
    assert "unknown op" in capsys.readouterr().err


def test_failure_is_one_line_with_non_zero_status(tmp_path):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "tinygrad_attn", "graph", "--out", str(not_a_folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("python -m tinygrad_attn graph:")
