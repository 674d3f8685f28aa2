"""Whether the kernel compiled for a TPU is the kernel that was graded: one program's ``pallas_call``s with the
sizes taken out, compared across two traces of the learner's function.

The compile row traces the function a second time, at the problem's realistic size, and a function may build
another kernel there (one Mosaic compiles where the graded one would be refused, or the other way round). Both
trusted processes that rebuild a traced program describe its kernels here (``signature``): the verifier for
each graded case's program, the TPU compile helper for the one it compiles. ``differs`` then says, on the
server, whether the two are the same kernel at two sizes:

- the same kernel body and the same index maps, equation by equation, with every number that can follow the
  sizes left out (shapes, slice bounds, literals), but the primitives, their wiring, dtypes, ranks and axes
  kept;
- the same operands (dtypes, ranks, memory spaces), scratch buffers, scalar-prefetch count and dimension
  semantics;
- every block dimension, grid dimension and scratch dimension the same function of the sizes: the whole
  array's dimension in both, the same static argument in both (``bm``), the same array dimension divided by
  the same static argument (a grid of ``M // bm``), or the same constant.
"""
from __future__ import annotations

import hashlib
import json
import re
from typing import Any

KEPT_PARAMS = {"axis", "axes", "dimension_numbers", "dimensions", "permutation", "broadcast_dimensions",
               "preferred_element_type", "new_dtype", "precision", "accumulation_type", "reduce_axes",
               "comparison_direction", "transpose_lhs", "transpose_rhs"}
"""Parameters kept whole: they say what an operation does, not how large it is."""
LEFT_OUT_PARAMS = {"name", "debug_info", "interpret", "ctx_mesh", "keep_unused", "inline", "compiler_params",
                   "cost_estimate", "metadata", "source_info", "out_shardings", "in_shardings", "donated_invars",
                   "in_layouts", "out_layouts", "resource_env"}
"""Parameters that say nothing about the kernel's computation."""


def _free(text: str) -> str:
    """``text`` with addresses and numbers taken out (a shape, a slice bound, a size)."""
    return re.sub(r"\d+", "#", re.sub(r"0x[0-9a-fA-F]+", "@", text))


def _jaxpr_form(jaxpr: Any, depth: int = 0) -> Any:
    """A jaxpr as JSON-able data with the sizes taken out: each equation's primitive, its operands (the number
    of the variable, or a literal's dtype), its results' dtypes and ranks, its parameters (``KEPT_PARAMS``
    whole, others without numbers) and its sub-programs."""
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    if depth > 16:
        return "deep"
    numbers: dict[int, int] = {}

    def number(v: Any) -> Any:
        if type(v).__name__ == "Literal":
            return "lit:" + str(getattr(getattr(v, "aval", None), "dtype", ""))
        return numbers.setdefault(id(v), len(numbers))

    def aval(v: Any) -> list:
        a = getattr(v, "aval", None)
        space = getattr(a, "memory_space", None)
        return [str(getattr(a, "dtype", "")), len(getattr(a, "shape", ()) or ()), str(space) if space else ""]

    for v in list(jaxpr.constvars) + list(jaxpr.invars):
        number(v)
    eqns = []
    for e in jaxpr.eqns:
        params, subs = {}, {}
        for k, v in sorted(e.params.items()):
            if k in LEFT_OUT_PARAMS:
                continue
            items = v if isinstance(v, (tuple, list)) else (v,)
            if items and all(hasattr(getattr(x, "jaxpr", x), "eqns") for x in items):
                subs[k] = [_jaxpr_form(x, depth + 1) for x in items]
            elif k == "grid_mapping":
                continue  # a nested pallas_call's blocks: compared by ``signature`` on the call itself
            else:
                params[k] = repr(v)[:400] if k in KEPT_PARAMS else _free(repr(v)[:400])
        eqns.append([e.primitive.name, [number(v) for v in e.invars], [aval(v) for v in e.outvars], params, subs])
        for v in e.outvars:
            number(v)
    return {"in": [aval(v) for v in jaxpr.invars], "eqns": eqns, "out": [number(v) for v in jaxpr.outvars]}


def _digest(form: Any) -> str:
    return hashlib.sha256(json.dumps(form, sort_keys=True, default=str).encode()).hexdigest()[:32]


def signature(closed: Any) -> list[dict[str, Any]]:
    """Each ``pallas_call`` of ``closed`` (in program order), its sizes apart from its form."""
    from grader.boundary.program import all_eqns
    out = []
    for e in all_eqns(closed):
        if e.primitive.name != "pallas_call":
            continue
        gm = e.params.get("grid_mapping")
        if gm is None:
            continue
        sem = getattr(e.params.get("compiler_params"), "dimension_semantics", None)

        def size(b: Any) -> int | None:
            n = getattr(b, "block_size", b)
            return int(n) if isinstance(n, int) else None

        out.append({
            "kernel": _digest(_jaxpr_form(e.params["jaxpr"])),
            "maps": [_digest(_jaxpr_form(bm.index_map_jaxpr)) for bm in gm.block_mappings],
            "blocks": [[size(b) for b in bm.block_shape] for bm in gm.block_mappings],
            "arrays": [[int(n) for n in bm.array_aval.shape] for bm in gm.block_mappings],
            "dtypes": [str(bm.array_aval.dtype) for bm in gm.block_mappings],
            "grid": [int(n) if isinstance(n, int) else None for n in gm.grid],
            "scratch": [[int(n) for n in a.shape] for a in gm.scratch_avals],
            "scratch_kinds": [[str(a.dtype), str(getattr(a, "memory_space", ""))] for a in gm.scratch_avals],
            "prefetch": int(gm.num_index_operands),
            "semantics": None if sem is None else [str(getattr(x, "name", x)).lower() for x in sem],
        })
    return out


def _labels(n: Any, facts: dict[str, Any], arrays: list[list[int]]) -> set[str]:
    """What a number can be, read from the sizes of one trace: a static argument or a small multiple or part of
    one (``arg:bm``, ``arg:bk*2``, ``arg:bm/2``), an array argument's dimension (``dim:a.0``) or an operand's
    (``op:1.0``), either divided by one of the former (``dim:a.0/arg:bm``: a grid of ``M // bm`` or
    ``pl.cdiv(M, bm)``), and itself (``=8``)."""
    out = {f"={n}"}
    derived: dict[str, int] = {}
    for k, v in facts.items():
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            derived[f"arg:{k}"] = v
            for f in (2, 3, 4, 8):  # a block of 2 * bk rows, or half of one
                derived[f"arg:{k}*{f}"] = v * f
                if v % f == 0:
                    derived[f"arg:{k}/{f}"] = v // f
    out |= {label for label, v in derived.items() if v == n}
    dims = {f"dim:{k}.{d}": dim for k, v in facts.items() if isinstance(v, list) and all(isinstance(x, int) for x in v)
            for d, dim in enumerate(v)}
    dims.update({f"op:{b}.{d}": dim for b, shape in enumerate(arrays) for d, dim in enumerate(shape)})
    for label, dim in dims.items():
        if dim == n:
            out.add(label)
        for by, v in derived.items():
            if n in (dim // v, -(-dim // v)):
                out.add(f"{label}/{by}")
    return out


def differs(graded: list[dict[str, Any]], compiled: list[dict[str, Any]], graded_facts: dict[str, Any],
            compiled_facts: dict[str, Any]) -> str | None:
    """A sentence when the kernels compiled (``compiled``, traced where the sizes are ``compiled_facts``) are not
    the graded ones (``graded``, traced where they are ``graded_facts``) at another size, else None."""
    if len(graded) != len(compiled):
        return (f"builds {len(compiled)} `pallas_call`(s) at the realistic size and {len(graded)} at the sizes of "
                "the cases")
    for k, (g, c) in enumerate(zip(graded, compiled)):
        which = "its `pallas_call`" if len(graded) == 1 else f"its `pallas_call` number {k + 1}"
        for key, what in (("kernel", "a different kernel body"), ("maps", "different index maps"),
                          ("dtypes", "operands of other dtypes"), ("scratch_kinds", "other scratch buffers"),
                          ("prefetch", "another number of scalar-prefetch operands"),
                          ("semantics", "other dimension semantics")):
            if g.get(key) != c.get(key):
                return f"{which} has {what} there"
        for key, what in (("blocks", "block"), ("grid", "grid"), ("scratch", "scratch buffer")):
            gs, cs = g.get(key) or [], c.get(key) or []
            if key == "grid":
                gs, cs = [gs], [cs]
            if len(gs) != len(cs) or any(len(a) != len(b) for a, b in zip(gs, cs)):
                return f"{which} has {what}s of other ranks there"
            for i, (a, b) in enumerate(zip(gs, cs)):
                for d, (x, y) in enumerate(zip(a, b)):
                    if (x is None) != (y is None):
                        return f"{which} squeezes another {what} dimension there"
                    if x is None:
                        continue
                    gl = _labels(x, graded_facts, g.get("arrays") or [])
                    cl = _labels(y, compiled_facts, c.get("arrays") or [])
                    if x != y and not (gl & cl) - {f"={x}", f"={y}"}:
                        name = {"block": f"the block of operand {i + 1}", "grid": "the grid",
                                "scratch buffer": f"scratch buffer {i + 1}"}[what]
                        return (f"{which} sizes {name} otherwise: dimension {d} is {y} there and {x} at the "
                                "cases' sizes, not the same function of the sizes")
    return None
