"""The op tables: a test case list for every public op, one file per op family.

Importing this package registers every family, in reading order (elementwise, reduce,
movement, matmul, softmax, attention, layers, functional, nn): the order `names()` lists them
and `python -m tinygrad_attn gradcheck` prints them. It re-exports the registry's API from
`testing.opspec`, so `op_tables.get("MatMul")` or `op_tables.all_samples(rng)` always sees
every family. To add an op, see the note at the top of `testing/opspec.py`.

Test data only: nothing here checks an op (tests/test_ops.py and the gradcheck command do).
"""

# ruff: noqa: I001  (the families register in this order, which is the order ops are listed)
from ..opspec import (
    AWAY_FROM_ZERO,
    BOOL,
    DISTINCT,
    DOMAINS,
    LOGITS,
    NEAR_ZERO,
    NONZERO,
    POSITIVE,
    REAL,
    SATURATING,
    SPREAD,
    Case,
    Choices,
    Domain,
    OpSpec,
    RandomChoices,
    Sample,
    Values,
    all_samples,
    draw_values,
    fixed,
    get,
    names,
    register,
    select,
    specs,
)
from . import elementwise, reduce, movement, matmul, softmax, attention, layers, functional, nn
from . import activations, pytorch, torch_functions, writes

FAMILIES = (
    elementwise,
    reduce,
    movement,
    matmul,
    softmax,
    attention,
    layers,
    functional,
    activations,
    nn,
    pytorch,
    torch_functions,
    writes,
)

__all__ = [
    "AWAY_FROM_ZERO",
    "BOOL",
    "DISTINCT",
    "DOMAINS",
    "FAMILIES",
    "LOGITS",
    "NEAR_ZERO",
    "NONZERO",
    "POSITIVE",
    "REAL",
    "SATURATING",
    "SPREAD",
    "Case",
    "Choices",
    "Domain",
    "OpSpec",
    "RandomChoices",
    "Sample",
    "Values",
    "all_samples",
    "draw_values",
    "fixed",
    "get",
    "names",
    "register",
    "select",
    "specs",
]
