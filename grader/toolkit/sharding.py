"""What XLA's SPMD partitioner made of a program: its collectives, each device's work, and the shardings.

The verifier compiles every rebuilt program for the grader's host CPU devices (``grader/verifier/verify.py``)
and, for a program that spans more than one device, reads the partitioned module it compiled
(``compiled.as_text()``) with ``read_hlo`` here, and the compiled program's own input and output shardings
(``grader/verifier/partitioned.py``). The record travels on the trace (``Trace.partitioned``), so a check reads
facts of the program the verifier rebuilt and XLA partitioned, never the learner's labels:

* the collectives (``all-reduce``, ``all-gather``, ``reduce-scatter``, ``collective-permute``,
  ``all-to-all``, and their async ``-start`` halves), each with the numbers it moves and how many times it
  runs per call (the trip counts of the ``while`` loops around it, which XLA states as ``known_trip_count``;
  a loop without one counts as unknown);
* each device's work: an estimate of the operations one device runs (``work``: a dot's or convolution's
  multiply-adds counted as 2 each, a reduction's inputs, one per element of every other computed array) and
  of its products (``products``: dots and convolutions, reductions at 2 per input and multiplies at 1 per
  element, so that a matrix product written as a broadcast multiply and a sum, or one XLA rewrote so because
  a dimension is 1, still counts), loops counted by their trip counts and
  both branches of a conditional counted;
* for every program input and output, the shape each device holds.

The reader is structural: an instruction is ``%name = TYPE opcode(operands), attributes`` on its own line in
a computation, and only the opcode position is read. Metadata (``op_name``, source lines), which carries the
learner's scope and function names, is never read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from math import prod
from typing import Any

from grader.toolkit.jaxpr_tools import Trace

COLLECTIVE_KINDS = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute", "all-to-all",
                    "ragged-all-to-all", "collective-broadcast")
"""The HLO opcodes that move data between devices (an async ``-start`` counts as its collective; its ``-done``
is not counted again)."""
FREE = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "after-all", "partition-id",
        "replica-id", "iota", "opt-barrier", "add-dependency", "domain"}
"""Opcodes that compute nothing per element."""

_COMPUTATION = re.compile(r"^(ENTRY\s+)?%([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")
_INSTRUCTION = re.compile(r"^\s+(?:ROOT\s+)?%([\w.\-]+)\s+=\s+")
_ARRAY = re.compile(r"\b(pred|[suf]\d+|bf16|f8\w*|c64|c128|token)\[([\d,]*)\]")
_CALLED = re.compile(r"\b(calls|to_apply|body|condition|true_computation|false_computation)=%([\w.\-]+)")
_BRANCHES = re.compile(r"\bbranch_computations=\{([^}]*)\}")
_TRIP = re.compile(r'"known_trip_count":\{"n":"(\d+)"\}')
_CONTRACT = re.compile(r"\blhs_contracting_dims=\{([\d,]*)\}")


@dataclass
class Instruction:
    name: str
    opcode: str
    shapes: list[tuple[int, ...]]
    """The result's array shapes (one for an array, several for a tuple)."""
    operands: list[str]
    calls: list[tuple[str, str]] = field(default_factory=list)
    """``(role, computation)`` pairs: ``calls``, ``to_apply``, ``body``, ``condition``, ``branch``."""
    trip_count: int | None = None
    contracting: tuple[int, ...] = ()


def _split_type(rest: str) -> tuple[str, str] | None:
    """``(type, remainder)`` of ``TYPE opcode(...)``: a tuple type is read to its matching parenthesis."""
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return rest[:i + 1], rest[i + 1:].lstrip()
        return None
    head, _, tail = rest.partition(" ")
    return head, tail


def _operands(text: str) -> tuple[list[str], str]:
    """The operand names of ``opcode(...)`` and the text after its closing parenthesis."""
    depth, i = 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            break
    inside = text[1:i]
    return re.findall(r"%([\w.\-]+)", inside), text[i + 1:]


def _strip_metadata(attrs: str) -> str:
    """The attributes without ``metadata={...}`` (the learner's names live there), read to its matching brace
    outside quoted strings."""
    start = attrs.find("metadata={")
    if start < 0:
        return attrs
    i, depth, quoted = start + len("metadata="), 0, False
    while i < len(attrs):
        ch = attrs[i]
        if quoted:
            if ch == "\\":
                i += 1
            elif ch == '"':
                quoted = False
        elif ch == '"':
            quoted = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return attrs[:start] + attrs[i + 1:]
        i += 1
    return attrs[:start]


def read_hlo(text: str) -> tuple[dict[str, list[Instruction]], str | None]:
    """Every computation of an HLO module's text, its instructions in order, and the entry's name."""
    computations: dict[str, list[Instruction]] = {}
    entry, current = None, None
    for line in text.splitlines():
        if current is None:
            m = _COMPUTATION.match(line)
            if m:
                current = m.group(2)
                computations[current] = []
                if m.group(1):
                    entry = current
            continue
        if line.strip() == "}":
            current = None
            continue
        m = _INSTRUCTION.match(line)
        if not m:
            continue
        split = _split_type(line[m.end():])
        if split is None:
            continue
        type_text, rest = split
        op = re.match(r"([\w\-]+)\(", rest)
        if not op:
            continue
        operands, attrs = _operands(rest[op.end() - 1:])
        attrs = _strip_metadata(attrs)
        shapes = [tuple(int(d) for d in dims.split(",") if d) for _, dims in _ARRAY.findall(type_text)]
        calls = [(role, name) for role, name in _CALLED.findall(attrs)]
        for branches in _BRANCHES.findall(attrs):
            calls += [("branch", b) for b in re.findall(r"%([\w.\-]+)", branches)]
        trip = _TRIP.search(attrs)
        contracting = _CONTRACT.search(attrs)
        computations[current].append(Instruction(
            m.group(1), op.group(1), shapes, operands, calls, int(trip.group(1)) if trip else None,
            tuple(int(d) for d in contracting.group(1).split(",") if d) if contracting else ()))
    return computations, entry


def _kind(opcode: str) -> str | None:
    base = opcode[:-6] if opcode.endswith("-start") else opcode
    return base if base in COLLECTIVE_KINDS else None


def partitioned_facts(text: str) -> dict[str, Any]:
    """``{"collectives": [...], "collectives_total": n, "work": w, "products": p, "unknown_loops": k}`` of an HLO
    module's text: each collective's ``kind``, the ``elements`` and ``shapes`` it produces, ``times`` it runs
    per call of the module (``None`` inside a loop of unknown trip count) and ``loops`` around it; ``work`` and
    ``products`` are one device's operations (see the module docstring). Each computation is read once, however
    often it is called, so the reading is linear in the module's text."""
    comps, entry = read_hlo(text)
    memo: dict[str, tuple[int, int, list, int, int]] = {}

    def summary(comp: str, stack: tuple[str, ...]) -> tuple[int, int, list, int, int]:
        """One call of ``comp``: ``(work, products, collectives, how many, loops of unknown length)``, each
        collective as ``[kind, shapes, elements, times per call or None, loops around it]``."""
        if comp in memo:
            return memo[comp]
        if comp in stack or comp not in comps:
            return 0, 0, [], 0, 0
        shapes = {i.name: (i.shapes[0] if i.shapes else ()) for i in comps[comp]}
        total = products = count = unknown = 0
        found: list = []

        def take(sub: tuple[int, int, list, int, int], factor: int | None, deeper: int) -> None:
            nonlocal total, products, count, unknown
            w, p, colls, n, u = sub
            total += w * (factor or 1)
            products += p * (factor or 1)
            count += n
            unknown += u
            for kind, sh, el, times, loops in colls:
                if len(found) < MAX_LISTED:
                    found.append([kind, sh, el, None if times is None or factor is None else times * factor,
                                  loops + deeper])

        for ins in comps[comp]:
            kind = _kind(ins.opcode)
            out = sum(prod(s) for s in ins.shapes)
            if kind:
                count += 1
                if len(found) < MAX_LISTED:
                    found.append([kind, [list(s) for s in ins.shapes[:16]], out, 1, 0])
            if ins.opcode == "while":
                unknown += ins.trip_count is None
                for role, c in ins.calls:
                    if role in ("body", "condition"):
                        take(summary(c, stack + (comp,)), ins.trip_count, 1)
            elif ins.opcode in ("fusion", "call", "conditional", "async-start"):
                for role, c in ins.calls:
                    if (role in ("calls", "branch", "true_computation", "false_computation")
                            or (role == "to_apply" and ins.opcode == "call")):
                        take(summary(c, stack + (comp,)), 1, 0)
            elif ins.opcode == "dot":
                lhs = shapes.get(ins.operands[0], ()) if ins.operands else ()
                k = prod(lhs[d] for d in ins.contracting if d < len(lhs)) if lhs else 1
                total += 2 * out * k
                products += 2 * out * k
            elif ins.opcode == "convolution":
                kernel = shapes.get(ins.operands[1], ()) if len(ins.operands) > 1 else ()
                n = 2 * out * prod(kernel[:-1]) if kernel else out
                total += n
                products += n
            elif ins.opcode in ("reduce", "reduce-window"):
                inputs = sum(prod(shapes.get(o, ())) for o in ins.operands[:max(1, len(ins.operands) // 2)])
                total += inputs
                products += 2 * inputs  # a multiply-add per element, as a product written by hand is
            elif ins.opcode not in FREE and not ins.opcode.endswith("-done") and not kind:
                total += out
                products += out if ins.opcode == "multiply" else 0  # XLA turns a product over a dimension of 1 into one
        memo[comp] = (total, products, found, count, unknown)
        return memo[comp]

    total, products, found, count, unknown = summary(entry, ()) if entry else (0, 0, [], 0, 0)
    return {"collectives": [{"kind": k, "shapes": sh, "elements": el, "times": t, "loops": lp}
                            for k, sh, el, t, lp in found],
            "collectives_total": count, "work": int(total), "products": int(products), "unknown_loops": unknown}


MAX_LISTED = 256
"""Collectives listed in a record (a program with more is read as "too many to count": rows fail closed)."""


# ----------------------------------------------------------------------------------------------------
# What checks read (``Trace.partitioned``, set by the verifier; absent without it: rows fail closed).

NO_RECORD = ("The grader could not read how XLA partitioned this program (it is read on the grader's side, "
             "from the program it rebuilt and compiled), so the row does not hold.")


def partitioned(trace: Trace) -> dict[str, Any] | None:
    """The verifier's record of how XLA partitioned the traced program, or None (no verifier, or a program
    it did not compile): a row that needs it fails closed with ``NO_RECORD``."""
    record = getattr(trace, "partitioned", None)
    return record if isinstance(record, dict) and isinstance(record.get("devices"), int) else None


def on_devices(trace: Trace, devices: int) -> tuple[dict[str, Any] | None, Any]:
    """``(record, None)`` when the verifier's record says the program spans exactly ``devices`` devices;
    otherwise ``(record or None, CheckResult)`` failing with why (no record, one device, another count)."""
    from grader.toolkit.jaxpr_tools import CheckResult
    record = partitioned(trace)
    if record is None:
        return None, CheckResult(False, NO_RECORD)
    n = record["devices"]
    if n == devices:
        return record, None
    if n <= 1:
        return record, CheckResult(False, "The program XLA compiled runs on a single device: nothing in it says "
                                   f"that its arrays live on a mesh of the {devices} devices. Place them there with "
                                   "`jax.jit(..., in_shardings=..., out_shardings=...)`, "
                                   "`jax.lax.with_sharding_constraint`, or `jax.shard_map` over "
                                   f"`Mesh(np.array(jax.devices()[:{devices}]), ...)`.")
    return record, CheckResult(False, f"The program XLA compiled spans {n} devices, not {devices}: build the mesh "
                               f"from `jax.devices()[:{devices}]`.")


def leaves_of(places: dict[str, dict[str, Any]], root: str) -> dict[str, dict[str, Any]]:
    """The entries of ``placements`` under the argument or output ``root`` (``params`` -> ``params['w1']``...)."""
    return {n: p for n, p in places.items() if n == root or n.startswith(root + "[") or n.startswith(root + ".")}


def placements(trace: Trace, record: dict[str, Any], side: str = "inputs") -> dict[str, dict[str, Any]]:
    """Each input (``side="inputs"``, by ``trace.input_names``) or output (``"outputs"``, by
    ``trace.output_names``) with its ``shape``, the ``shard`` one device holds, and ``devices`` it spans."""
    names = trace.input_names if side == "inputs" else trace.output_names
    rows = record.get(side) if isinstance(record.get(side), list) else []
    return {n: r for n, r in zip(names, rows) if isinstance(r, dict)}


def split_rows(place: dict[str, Any], devices: int) -> bool:
    """Whether an array is split by its first axis into ``devices`` parts, one per device, and nothing else."""
    return split_along(place, devices, 0)


def split_along(place: dict[str, Any], devices: int, axis: int) -> bool:
    """Whether an array is split along ``axis`` into ``devices`` parts, one per device, and nothing else."""
    shape, shard = list(place.get("shape") or []), list(place.get("shard") or [])
    if not shape or len(shard) != len(shape) or place.get("devices") != devices or not -len(shape) <= axis < len(shape):
        return False
    axis %= len(shape)
    return shard[axis] * devices == shape[axis] and all(a == b for k, (a, b) in enumerate(zip(shard, shape))
                                                      if k != axis)


def whole(place: dict[str, Any], devices: int) -> bool:
    """Whether every one of ``devices`` devices holds the whole array (replicated)."""
    return place.get("devices") == devices and list(place.get("shard") or []) == list(place.get("shape") or [])


def complete(record: dict[str, Any]) -> bool:
    """Whether the record lists every collective of the program (it lists at most ``MAX_LISTED``)."""
    return len(record.get("collectives") or []) == record.get("collectives_total", 0)


def collectives(record: dict[str, Any], kinds: tuple[str, ...] = COLLECTIVE_KINDS) -> list[dict[str, Any]]:
    """The partitioned program's collectives of the given kinds (see ``partitioned_facts``)."""
    return [c for c in record.get("collectives") or [] if isinstance(c, dict) and c.get("kind") in kinds]


def moved(items: list[dict[str, Any]]) -> int | None:
    """The numbers the collectives produce per call, each counted as often as it runs; None when one runs in
    a loop of unknown trip count."""
    total = 0
    for c in items:
        if c.get("times") is None:
            return None
        total += int(c.get("elements") or 0) * int(c["times"])
    return total


def shape_text(shape: Any) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
