"""What a Run can already say about a kernel's blocks, from the program it traced (issue 46).

The TPU compile ("Compiles for a TPU v5e") runs on Submit only, so a Run of a kernel with a block of one row
said nothing but "pallas-grid", and the reason Mosaic refuses it came a Submit later. The printed jaxpr of a
Run (on the page already) holds each ``pallas_call``'s kernel ``Ref`` shapes (its blocks) and the arrays they
cut: a block with one row of an array with more is refused at any size, since Mosaic tiles a block's last
two dimensions by 8 and 128 (or the whole dimension). The examples are small, so a block size passed in
(``bm``) can be 1 there and 128 at the compiled size: the forecast is made only where the code itself writes
a ``BlockSpec`` whose block has the literal 1 rows (read with ``ast``, never run). Nothing here decides a
verdict: it is a forecast in words beside the row that Submit checks.
"""
from __future__ import annotations

import ast
import re

from grader import pysource

_BINDER = re.compile(r"\b(\w+):\w+\[([\d,]*)\]")
_REF = re.compile(r"\w+:Ref<\w+>\{\w+\[([\d,]*)\]\}")


def _shape(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.split(",") if d)


def one_row_blocks(jaxpr_text: str) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(block, array) of each ``pallas_call`` operand or result whose block has one row of an array with more."""
    shapes = {name: _shape(dims) for name, dims in _BINDER.findall(jaxpr_text)}
    lines = jaxpr_text.splitlines()
    found = []
    for i, line in enumerate(lines):
        if "= pallas_call[" not in line:
            continue
        indent = line[:len(line) - len(line.lstrip())]
        outs = [_shape(d) for _, d in _BINDER.findall(line.split("=")[0])]
        close = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(indent + "] ")), None)
        if close is None:
            continue
        operands = lines[close][len(indent) + 2:].split()
        body = "\n".join(lines[i:close])
        at = body.find("jaxpr={ lambda ; ")
        if at < 0:
            continue
        refs = [_shape(d) for d in _REF.findall(body[at:body.find(". let", at)])]
        arrays = [shapes.get(name) for name in operands] + outs
        for block, array in zip(refs, arrays):
            if array and len(block) >= 2 and len(array) == len(block) and block[-2] == 1 and array[-2] > 1:
                found.append((block, array))
    return found


def literal_one_rows(code: str) -> list[int]:
    """The lines of ``BlockSpec((..., 1, n), ...)`` calls: a block written with the literal 1 rows."""
    try:
        tree = pysource.parse(code or "")  # one parse at a time in the server (grader/pysource.py)
    except (SyntaxError, ValueError, RecursionError):
        return []
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name != "BlockSpec":
            continue
        shape = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "block_shape"), None)
        if isinstance(shape, ast.Tuple) and len(shape.elts) >= 2 and \
                isinstance(shape.elts[-2], ast.Constant) and shape.elts[-2].value == 1:
            lines.append(node.lineno)
    return sorted(lines)


def forecast(jaxpr_text: str, code: str) -> str:
    """A sentence for the TPU compile's row on a Run, or ``""`` when the traced blocks and the code give no
    reason."""
    blocks = one_row_blocks(jaxpr_text or "")
    lines = literal_one_rows(code)
    if not blocks or not lines:
        return ""
    block, array = blocks[0]
    return (f"From this Run: the `BlockSpec` on your line {lines[0]} gives a block one row high (`{block}` of a "
            f"`{array}` array here). Mosaic tiles "
            "a block's last two dimensions by 8 and 128 (or takes the whole dimension), so the TPU v5e compile "
            "will refuse a one-row block at any size: give the block 8 rows or more (a multiple of 8). Submit "
            "compiles it and says.")
