"""`python -m tinygrad_attn gradcheck` (testing/cli.py): the table, the exit codes, the report
of a failing op, --list."""

import numpy as np
from planted_bugs import SquareMissingTwo

from tinygrad_attn.testing import op_tables, opspec
from tinygrad_attn.testing.cli import main


def test_cli_prints_a_table_and_exits_zero(capsys):
    assert main(["Add", "matmul", "F.*softmax"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    head = ["op", "cases", "max", "abs", "err", "max", "rel", "err", "2nd", "rel", "err", "result"]
    assert lines[0].split() == head
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert set(rows) == {"Add", "MatMul", "F.softmax", "F.log_softmax"}
    assert rows["Add"][1] == str(len(op_tables.get("Add").cases))
    assert all(row[-1] == "ok" for row in rows.values())
    assert float(rows["MatMul"][2]) < 1e-6
    assert lines[-1].startswith("all 4 ops passed")


def test_cli_unknown_op_exits_two_and_lists_the_names(capsys):
    assert main(["Add", "Softmaxx"]) == 2
    err = capsys.readouterr().err
    assert "Softmaxx" in err
    assert "MatMul" in err and "ScaledDotProductAttention" in err


def test_cli_fails_with_the_report_when_an_op_is_wrong(capsys, monkeypatch):
    add = op_tables.get("Add")
    broken = op_tables.OpSpec(
        "BrokenSquare",
        SquareMissingTwo.apply,
        np.square,
        (op_tables.Case("(3,)", (op_tables.Values((3,)),)),),
        add.generate,
        "tests",
    )
    monkeypatch.setitem(opspec._REGISTRY, "BrokenSquare", broken)
    assert main(["BrokenSquare", "Add"]) == 1
    out = capsys.readouterr().out
    assert "BrokenSquare" in out and "FAIL (1)" in out
    assert "1 of 2 ops FAILED" in out
    assert "BrokenSquare[(3,)]" in out and "hint: constant factor" in out


def test_cli_list(capsys):
    assert main(["--list"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == len(op_tables.names())
