"""Formulas: how a picture writes what a node computes (`X Wᵀ`, `Q Kᵀ / √5`,
`softmax(scores)`, `g × weights`), a constant (`1/√5`), an index (`[:, 6:]`), and whose backward
made an op of a gradient's graph ("from the backward of softmax").

A formula is written from the names of what the node reads: a tensor's name, a parameter's
role (W, b), a constant's value, the path of a collapsed module, else a letter: a, b, ... for
values, g, g₂, ... for gradients. This module only writes text: which ops make up a node is
picture.py's business, how it is drawn dot.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .trace import OpRecord, TensorRecord

if TYPE_CHECKING:
    from .picture import Picture

_LONGEST_PHRASE = 34  # longer formulas are written as the ops' names instead


def constant_text(value: float) -> str:
    """`0.447 (1/√5)`: a constant, and the square root it is the inverse of, if it is one."""
    if value > 0:
        square = 1 / (value * value)
        n = round(square)
        if 2 <= n <= 4096 and abs(square - n) < 1e-3 * n:
            return f"1/√{n}"
    return f"{value:.4g}"


def _name(record: TensorRecord) -> str:
    if record.kind == "parameter" and record.name:
        last = record.name.rpartition(".")[2]
        return {"weight": "W", "bias": "b"}.get(last, last)
    if record.kind == "constant" and record.tensor is not None:
        return constant_text(float(np.asarray(record.tensor._data).reshape(-1)[0]))
    return record.name or "x"


def wrap(text: str) -> str:
    """Brackets around a sum or a quotient (not around a product `Q Kᵀ` or a call)."""
    return f"({text})" if any(f" {sign} " in text for sign in "+−/×") else text


def _slice_text(part: slice) -> str:
    """`6:`, `:3`, `::2`, `1:5`, `:` - a slice as it was written."""
    text = ("" if part.start is None else str(part.start)) + ":"
    text += "" if part.stop is None else str(part.stop)
    return text + ("" if part.step is None else f":{part.step}")


def index_text(index) -> str:
    """An index as it was written (`5`, `:, 6:`, `..., None`); an array index as `[…]`."""
    parts = index if isinstance(index, tuple) else (index,)
    shown = []
    for part in parts:
        if isinstance(part, (int, np.integer)):
            shown.append(str(int(part)))
        elif isinstance(part, slice):
            shown.append(_slice_text(part))
        elif part is Ellipsis:
            shown.append("...")
        elif part is None:
            shown.append("None")
        else:  # an array of indices or a mask
            shown.append("…")
    return ", ".join(shown)


def _view_text(chain: tuple) -> str:
    """The view a write went through: `[1:]` for a slice, `view` for anything else."""
    if len(chain) == 1 and chain[0][0].__name__ == "GetItem":
        return f"[{index_text(chain[0][1].get('index'))}]"
    return "a view"


def _op_phrase(op: OpRecord, args: list[str], same: bool) -> str:
    node, name = op.node, op.node.name
    a = args[0] if args else ""
    b = args[1] if len(args) > 1 else ""
    infix = {"Add": "+", "Sub": "−", "Div": "/"}
    if name in infix and len(args) == 2:
        if name == "Div" or infix[name] == "−":
            return f"{a} {infix[name]} {wrap(b)}"
        return f"{a} {infix[name]} {b}"
    if name == "Mul" and len(args) == 2:
        if same:
            return f"{wrap(a)}²"
        if b.startswith("1/√"):
            return f"{wrap(a)} / {b[2:]}"
        return f"{wrap(a)} × {wrap(b)}"
    if name == "MatMul" and len(args) == 2:
        return f"{wrap(a)} {wrap(b)}"
    if name in ("Linear",) and len(args) >= 2:
        return f"{wrap(a)} {args[1]}ᵀ" + (f" + {args[2]}" if len(args) > 2 else "")
    if name == "Transpose":
        axes = getattr(node, "axes", None)
        if (
            axes is not None
            and len(axes) >= 2
            and tuple(axes[-2:])
            == (
                len(axes) - 1,
                len(axes) - 2,
            )
        ):
            return a[:-1] if a.endswith("ᵀ") and " " not in a else f"{wrap(a)}ᵀ"  # (Kᵀᵀ = K)
        return f"transpose({a})"
    if name == "Neg":
        return f"−{wrap(a)}"
    if name == "Pow" and len(args) == 2:
        return f"{wrap(a)}^{b}"
    if name == "Sqrt":
        return f"√{wrap(a)}"
    if name == "Abs":
        return f"|{a}|"
    if name == "GetItem":
        return f"{wrap(a)}[{index_text(getattr(node, 'index', None))}]"
    if name == "IndexPut" and len(args) == 2:
        return f"{wrap(a)} with [{index_text(getattr(node, 'index', None))}] = {b}"
    if name == "CopySlices" and len(args) == 2:
        return f"{wrap(a)} with {_view_text(getattr(node, 'chain', ()))} = {b}"
    if name == "Copy" and len(args) == 2:
        return f"{b} copied into {a}"
    if name == "ScaledDotProductAttention":  # the op's own formula: the article's head
        scale = getattr(node, "scale", None)
        divided = (
            f" / {constant_text(scale)[2:]}" if scale and constant_text(scale)[:2] == "1/" else ""
        )
        mask = " + mask" if len(args) > 3 else ""
        return f"softmax(Q Kᵀ{divided}{mask}) V"
    return f"{_SHORT.get(name, name.lower())}({', '.join(args)})"


_SHORT = {  # how a formula names an op
    "Sigmoid": "σ",
    "LayerNorm": "layer_norm",
    "CrossEntropy": "cross_entropy",
    "LogSoftmax": "log_softmax",
    "MaskedFill": "masked_fill",
}
# how a node made by an op's backward names that op: its formula's sign, or a word
_BACKWARD_OF = {
    **_SHORT,
    "Add": "+",
    "Sub": "−",
    "Mul": "×",
    "Div": "/",
    "Neg": "−x",
    "MatMul": "a matmul",
    "Linear": "x Wᵀ + b",
    "GetItem": "indexing",
    "Transpose": "a transpose",
    "ScaledDotProductAttention": "the fused attention",
}


def gradient_letter(count: int) -> str:
    """g, g₂, g₃, ...: the gradients a node reads from other nodes."""
    return "g" if count == 0 else "g" + "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(count + 1))


def backward_source(nodes: list) -> str | None:
    """What made `nodes` (the ops of a drawn node), when a backward pass did: "from the backward
    of softmax", "from the backward of ×", or the engine's own work ("the engine: sum of
    gradients", where two gradients of one tensor add up; "the engine: un-broadcast", summing a
    gradient to its input's shape). None for the program's ops."""
    parts = []
    for what in dict.fromkeys(node.made_by for node in nodes if node.made_by):
        if what == "accumulate":
            adds = any(node.name == "Add" for node in nodes if node.made_by == what)
            parts.append("the engine: " + ("sum of gradients" if adds else "un-broadcast"))
        else:
            name = what.removesuffix(".backward")
            parts.append(f"from the backward of {_BACKWARD_OF.get(name, name.lower())}")
    return "; ".join(parts) or None


def is_plumbing(op: OpRecord) -> bool:
    """An op that only rearranges (a reshape, a transpose of other axes than the last two): in
    a node with a real step, it is counted, not written into the formula."""
    name = op.node.name
    if name == "Reshape":
        return True
    if name == "Transpose":
        axes = tuple(getattr(op.node, "axes", None) or ())
        n = len(axes)
        return not (n >= 2 and axes[-2:] == (n - 1, n - 2) and axes[:-2] == tuple(range(n - 2)))
    return False


def plumbing_count(picture: Picture, node: str) -> int:
    """How many ops of a node only rearrange its data around the node's real steps (0 when
    the node is nothing but such ops)."""
    ops = picture.groups[node]
    plumbing = sum(is_plumbing(op) for op in ops)
    return plumbing if plumbing < len(ops) else 0


def _module_output(path: str) -> str:
    """What a collapsed module made, in a formula: `out_proj`, or the whole path when its last
    part is a number (`blocks.1`, not `1`)."""
    last = path.rpartition(".")[2]
    if not last.isdigit():
        return last
    return path if "." in path else f"module {path}"


def phrase(picture: Picture, node: str) -> str:
    """The formula an op node computes, from the names of what it reads: `X Wᵀ`,
    `Q Kᵀ / √5`, `softmax(scores)`, `mean((output[5] − target)²)`, the fused attention as
    `softmax(Q Kᵀ / √16) V`. Reshapes and transposes around a real step are left out of the
    formula (`plumbing_count` says how many there are). Falls back to the ops' names
    (`Mul → Add → Tanh`) when the formula would be long."""
    ops = picture.groups[node]
    skip = plumbing_count(picture, node) > 0
    if len(ops) - (plumbing_count(picture, node) if skip else 0) > 12:
        return _names(ops)
    inside = {op.output.id: op for op in ops}
    tensors = picture.tensors
    texts: dict[str, str] = {}
    letters: dict[str, str] = {}  # unnamed inputs from other nodes: a, b, c ...

    def outside(source: str) -> str:
        record = tensors[source]
        if source in picture.names:
            return picture.names[source]
        if record.name or record.kind != "tensor":
            return _name(record)
        box = picture.owner.get(source, "")
        if box in picture.boxes:
            return _module_output(picture.boxes[box].path)  # what a collapsed module made
        transposed = _transposed_name(picture, source)
        if transposed:  # a node that only transposes a named tensor: `Kᵀ`, not a letter
            return transposed
        gradient = source in picture.gradients  # a gradient from another node: g, g₂, g₃ ...
        count = sum(1 for s in letters if (s in picture.gradients) == gradient)
        if source not in letters:
            letters[source] = gradient_letter(count) if gradient else "abcdefgh"[count % 8]
        return letters[source]

    for op in ops:
        sources = picture.inputs_of.get(op.id, [])
        args = [texts[s] if s in inside else outside(s) for s in sources]
        same = len(sources) == 2 and sources[0] == sources[1]
        if skip and is_plumbing(op):
            texts[op.output.id] = args[0]  # rearranged, the same values
        else:
            texts[op.output.id] = _op_phrase(op, args, same)
    result = texts[ops[-1].output.id]
    return result if len(result) <= _LONGEST_PHRASE else _names(ops)


def _transposed_name(picture: Picture, source: str) -> str | None:
    """`Kᵀ` for the result of a node that is one transpose of a named tensor's last two axes
    (read by more than one op, so drawn on its own), else None."""
    producer = picture.producer.get(source)
    node = picture.owner.get(source)
    if producer is None or picture.groups.get(node) != [producer]:
        return None
    if producer.node.name != "Transpose" or is_plumbing(producer):
        return None
    (before,) = picture.inputs_of.get(producer.id, [None])
    record = picture.tensors.get(before)
    if record is None or not (record.name or before in picture.names):
        return None
    name = picture.names.get(before) or _name(record)
    return f"{wrap(name)}ᵀ"


def _names(ops: list[OpRecord]) -> str:
    """`Mean → Sub → … → Add  (8 ops)`: a node's ops, when their formula would be long."""
    names = [op.node.name for op in ops]
    if len(names) > 6:  # the first and last steps, and how many there are
        names = [*names[:2], "…", *names[-2:]]
    return " → ".join(names) + f"  ({len(ops)} ops)"
