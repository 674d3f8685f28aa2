"""Reading a Pallas kernel in a traced program, and the "Compiles for a TPU v5e" row.

A ``pallas_call`` equation's view (``child.JaxprSerializer.pallas``) carries its grid and blocks as plain
data (``params["grid"]``, ``params["blocks"]``: ``origin``, ``block_shape``, ``array_shape``; ``scratch``;
``num_scalar_prefetch``; ``dimension_semantics``), its kernel as the sub-program ``jaxpr`` (whose inputs are
Refs: the scalar-prefetch operands, then one per input block, one per output block, then the scratch
buffers) and each block's index map as ``index_map[i]``.
"""
from __future__ import annotations

import re
from typing import Any

from grader.toolkit.jaxpr_tools import CheckResult, EqnRef, Trace, find, iter_eqns

MB = 1 << 20


def pallas_calls(trace: Trace) -> list[EqnRef]:
    """Every ``pallas_call`` of the program (JAX's own: a look-alike arrives as ``foreign:pallas_call``)."""
    return find(trace.jaxpr, {"pallas_call"})


def kernel_eqns(call: EqnRef) -> list[EqnRef]:
    """Every equation of the call's kernel, its loops' and branches' included."""
    sub = call.eqn["subjaxprs"].get("jaxpr")
    if sub is None:
        return []
    return list(iter_eqns(sub, f"{call.path}/jaxpr/", call.ancestors + (call,)))


def outside_kernels(trace: Trace) -> list[EqnRef]:
    """Every equation that is not inside a ``pallas_call`` (neither its kernel nor its index maps)."""
    return [r for r in iter_eqns(trace.jaxpr) if not any(a.primitive == "pallas_call" for a in r.ancestors)]


def definitions(jaxpr: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """``{variable id: the equation that defines it}`` in one (sub-)program, its sub-programs left out."""
    out = {}
    for eqn in jaxpr["eqns"]:
        for v in eqn["outvars"]:
            if "id" in v:
                out[v["id"]] = eqn
    return out


def program_id_test(cond: EqnRef, jaxpr: dict[str, Any], axis: int, value: int = 0) -> bool:
    """Whether ``cond``'s branch index is ``pl.program_id(axis) == value`` (what ``pl.when`` traces to:
    ``eq`` of ``program_id[axis]`` and a literal, converted to an index), read in ``jaxpr``, the program
    that holds the ``cond``."""
    defs = definitions(jaxpr)
    index = cond.eqn["invars"][0] if cond.eqn["invars"] else {}
    eqn = defs.get(index.get("id"))
    while eqn is not None and eqn["primitive"] == "convert_element_type":
        eqn = defs.get(eqn["invars"][0].get("id"))
    if eqn is None or eqn["primitive"] != "eq":
        return False
    pid, lit = False, False
    for v in eqn["invars"]:
        d = defs.get(v.get("id"))
        if d is not None and d["primitive"] == "program_id" and d["params"].get("axis") == axis:
            pid = True
        elif "lit" in v and _literal(v["lit"]) == value:
            lit = True
    return pid and lit


INDEX_OPS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "max": max, "min": min, "neg": lambda a: -a,
    "div": lambda a, b: int(a / b) if b else None, "rem": lambda a, b: int(a - b * int(a / b)) if b else None,
    "eq": lambda a, b: int(a == b), "ne": lambda a, b: int(a != b), "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b), "gt": lambda a, b: int(a > b), "ge": lambda a, b: int(a >= b),
    "convert_element_type": lambda a: a, "copy": lambda a: a, "copy_p": lambda a: a,
    "select_n": lambda which, *cases: cases[int(which)] if 0 <= int(which) < len(cases) else None,
}
"""The scalar integer arithmetic an index map is written with (``lax.div`` and ``lax.rem`` round toward zero,
as XLA's integer division does); an index map that uses anything else is not evaluated."""


def block_indices(call: EqnRef, block: int, point: tuple[int, ...]) -> list[int] | None:
    """The block indices ``index_map[block]`` of ``call`` returns at grid ``point``, evaluated from the
    program's data (scalar integer arithmetic, nested ``jit``s), or None where it cannot say: scalar-prefetch
    operands, a primitive outside ``INDEX_OPS``, a value that is not a scalar. Interpret mode clamps a block
    index past the array's end onto the last block, so the numbers cannot tell a wrong index map there; this
    can."""
    sub = call.eqn["subjaxprs"].get(f"index_map[{block}]")
    if sub is None or len(sub["invars"]) != len(point):
        return None
    return _evaluate(sub, list(point))


def _evaluate(jaxpr: dict[str, Any], args: list[int], depth: int = 0) -> list[int] | None:
    if depth > 8 or jaxpr.get("constvars"):
        return None
    env = {v.get("id"): a for v, a in zip(jaxpr["invars"], args)}

    def read(atom: dict[str, Any]) -> int | None:
        if "lit" in atom:
            value = _literal(atom["lit"])
            return None if value is None or value != int(value) else int(value)
        return env.get(atom.get("id"))

    for eqn in jaxpr["eqns"]:
        values = [read(v) for v in eqn["invars"]]
        if None in values or any(v.get("shape") not in (None, []) for v in eqn["outvars"]):
            return None
        inner = eqn.get("subjaxprs", {}).get("jaxpr")
        if eqn["primitive"] in ("jit", "pjit", "closed_call") and inner is not None:
            out = _evaluate(inner, values, depth + 1)
        elif eqn["primitive"] in INDEX_OPS and not eqn.get("subjaxprs"):
            result = INDEX_OPS[eqn["primitive"]](*values)
            out = None if result is None else [int(result)]
        else:
            return None
        if out is None or len(out) != len(eqn["outvars"]):
            return None
        env.update({v.get("id"): o for v, o in zip(eqn["outvars"], out)})
    result = [read(v) for v in jaxpr["outvars"]]
    return None if None in result else result


def _literal(text: str) -> float | None:
    """The number a literal's printed form holds (``0``, ``0:i32[]``, ``TypedNdArray(0, dtype=int32)``,
    ``np.int32(0)``, ``Array(0, dtype=int32)``)."""
    m = re.match(r"^\s*(?:TypedNdArray\(|Typed\w*\(|np\.\w+\(|Array\()?\s*(-?\d+(?:\.\d*)?)", str(text))
    return float(m.group(1)) if m else None


def tpu_compiles(trace: Trace, what: str = "The kernel") -> CheckResult:
    """The "Compiles for a TPU v5e" row, from the record the trusted side compiled
    (``grader/verifier/tpu_compile.py``): passed when Mosaic compiled it, failed with Mosaic's message when
    it refused, not checked (``checked=False``, never a pass) where the TPU extra is missing."""
    record = trace.tpu or {"status": "not_checked", "message": "Not checked: the grader did not compile this "
                           "program for a TPU (no compile record)."}
    status = record.get("status")
    lines = record.get("lines") or []
    where = f" (your `pallas_call` on line {lines[0]})" if lines else ""
    if status == "compiled":
        bits = []
        if record.get("peak_bytes"):
            bits.append(f"planned peak {record['peak_bytes'] / MB:.1f} MiB of HBM")
        if record.get("seconds") is not None:
            bits.append(f"compiled in {record['seconds']:g} s")
        return CheckResult(True, f"{what}{where} compiles for a TPU v5e with Mosaic, ahead of time"
                           + (f" ({', '.join(bits)})." if bits else "."))
    if status == "refused":
        kind = {"tiling": "Mosaic cannot tile a block", "vmem": "one step does not fit in VMEM",
                "layout": "Mosaic cannot lay out a value"}.get(record.get("kind"), "Mosaic refused it")
        return CheckResult(False, f"{what}{where} does not compile for a TPU v5e: {kind}. Mosaic says: "
                           f"{record.get('message', '')}")
    if status == "traced_error":
        return CheckResult(False, str(record.get("message", "")))
    return CheckResult(False, str(record.get("message") or "Not checked."), checked=False)
