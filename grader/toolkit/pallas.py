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

from grader.boundary.program import grid_points as _walk_grid
from grader.toolkit.carries import carries
from grader.toolkit.dataflow import Node, node
from grader.toolkit.jaxpr_tools import (CheckResult, EqnRef, Trace, depends_on, find, from_inputs, iter_eqns,
                                        line_hint)

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


VIEWS = {"reshape", "squeeze", "expand_dims", "copy", "copy_p"}
"""Equations that only re-describe an array (no arithmetic, and XLA moves nothing for them); with a
size-preserving ``broadcast_in_dim`` (``g[None, :]``) and a ``convert_element_type`` to the same dtype."""
CALLS = {"jit", "pjit", "closed_call", "core_call", "pallas_call"}
"""Equations that hold others: what they hold is looked at on its own."""
DATA_MOVES = VIEWS | CALLS


def _size(atom: dict[str, Any]) -> int:
    n = 1
    for d in atom.get("shape") or []:
        n *= int(d) if isinstance(d, int) else 1
    return n


def _is_view(ref: EqnRef) -> bool:
    eqn = ref.eqn
    if ref.primitive in DATA_MOVES:
        return True
    ins, outs = eqn["invars"], eqn["outvars"]
    if ref.primitive == "broadcast_in_dim" and len(ins) == 1 and outs:
        return _size(outs[0]) == _size(ins[0])
    if ref.primitive == "convert_element_type" and len(ins) == 1 and outs:
        return outs[0].get("dtype") == ins[0].get("dtype")
    return False


def computed_outside(trace: Trace, data: str) -> list[EqnRef]:
    """The equations outside every kernel that compute (not a view, not a call) on a value that depends on
    argument ``data``: each is one more pass over the data (or the result made from it) in HBM. Work on
    other arguments (stacking a scale and a shift, say) is not."""
    reach = from_inputs(trace, data)
    return [r for r in outside_kernels(trace) if not _is_view(r) and depends_on(r, reach)]


def row_block_grid(trace: Trace, x: str, whole: tuple[str, ...] = ()) -> CheckResult:
    """The grid row of a kernel over blocks of whole rows: one ``pallas_call`` over ``(M // bm,)`` (``bm`` the
    static argument of that name), ``(bm, N)`` blocks of argument ``x`` and of the one output, step ``i`` at
    block ``(i, 0)`` (index maps evaluated at every step); the arguments named in ``whole`` handed whole to
    every step, in any order and packed or not (each other operand's block is its whole array, at block 0);
    and the answer from that call (its result replaced, the output moves; the arguments reach the output
    only through it)."""
    calls = pallas_calls(trace)
    m, n = trace.args[x]
    bm = trace.args["bm"]
    if len(calls) != 1:
        passes = " (each one more pass over the data in HBM)" if len(calls) > 1 else ""
        return CheckResult(False, f"Expected one `pallas_call`, found {len(calls)}{passes}: write "
                           f"`pl.pallas_call(kernel, grid=(M // bm,), in_specs=..., out_specs=...)({x}, ...)`.",
                           [c.evidence("pallas_call") for c in calls])
    call = calls[0]
    p = call.params
    if p.get("grid") != [m // bm]:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} runs over the grid {tuple(p.get('grid') or ())}; "
                           f"for M={m} with bm={bm} it should be {(m // bm,)}: (M // bm,), one step per block of "
                           "rows.", [call.evidence("grid")])
    blocks = p.get("blocks") or []
    count = p.get("num_inputs", len(blocks) - 1)
    inputs, outputs = list(enumerate(blocks))[:count], list(enumerate(blocks))[count:]
    names = " and ".join(f"`{w}`" for w in (x, *whole))
    if (len(outputs) != 1 or not 1 <= len(inputs) <= 1 + len(whole) or p.get("num_scalar_prefetch")
            or (whole and len(inputs) == 1)):
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} takes {len(inputs)} blocked operands and "
                           f"gives {len(outputs)} results; give it {names} "
                           f"{'with a `BlockSpec` each' if whole else 'with one `BlockSpec`'}, and one for the output.",
                           [call.evidence("blocks")])
    rows = [b for b in inputs if b[1]["array_shape"] == [m, n]][:1] or inputs[:1]
    rows = [(rows[0][0], f"`{x}`", rows[0][1]), (outputs[0][0], "the output", outputs[0][1])]
    for _, name, got in rows:
        if got["array_shape"] != [m, n] or got["block_shape"] != [bm, n]:
            return CheckResult(False, f"The block of {name} (`{got['origin']}`, an array of shape "
                               f"{tuple(got['array_shape'])}) is {tuple(got['block_shape'])}; it should be "
                               f"{(bm, n)}: `bm` whole rows of the {(m, n)} array.", [call.evidence("block")])
    others = [(b, f"`{got['origin']}`", got) for b, got in inputs if b != rows[0][0]]
    for _, name, got in others:
        if got["block_shape"] != got["array_shape"]:
            return CheckResult(False, f"The block of {name} is {tuple(got['block_shape'])} of an array of shape "
                               f"{tuple(got['array_shape'])}; every step needs all of "
                               f"{' and '.join(f'`{w}`' for w in whole)}: a block the size of the whole array.",
                               [call.evidence("block")])
    revisit = revisited_output(call)
    if revisit is not None:
        return revisit
    for step in range(m // bm):
        for b, name, got in rows + others:
            wanted = [step, 0] if (b, name, got) in rows else [0] * len(got["block_shape"])
            at = block_indices(call, b, (step,))
            if at is None:
                return CheckResult(False, unevaluated(call, [b]) or "An index map could not be evaluated.",
                                   [call.evidence("index map")])
            if at != wanted:
                where = ((f"row {step}" if bm == 1 else f"rows {step * bm} to {(step + 1) * bm - 1}")
                         + f", all {n} columns" if (b, name, got) in rows else "the whole array")
                return CheckResult(False, f"At grid step {step} the index map of {name}'s block{line_hint(call)} "
                                   f"returns {tuple(at)}; it should be {tuple(wanted)}: {where}. Step i works on "
                                   "row block i, and every other operand is whole at every step.",
                                   [call.evidence("index map")])
    carry = carries(trace, call, around_from=(x, *whole), what="the `pallas_call`")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the `pallas_call`'s result itself.",
                           [call.evidence("pallas_call that does not carry the answer")] + carry.around_evidence)
    extra = f", {' and '.join(f'`{w}`' for w in whole)} whole at every step" if whole else ""
    return CheckResult(True, f"One `pallas_call`{line_hint(call)} over the grid {(m // bm,)} with blocks of "
                       f"{(bm, n)}{extra}, and the result comes from it.", [call.evidence("pallas_call")])


def fused_kernel(trace: Trace, what: str, steps: list[tuple[str, set[str], str]], data: str) -> CheckResult:
    """The fused row of a one-kernel computation over argument ``data``: nothing outside the kernel computes
    on ``data`` or on what is made from it (``computed_outside``), there is one ``pallas_call``, and its kernel
    (loops, branches and nested calls included) holds each of ``steps``: ``(what it is, the primitives that
    compute it, how to write it)``."""
    outside = computed_outside(trace, data)
    if outside:
        r = outside[0]
        return CheckResult(False, f"`{r.primitive}`{line_hint(r)} runs outside the kernel on `{data}` or on what "
                           "is made from it: one more pass over the data in HBM. Compute the whole {what} in the kernel and "
                           "return the `pallas_call`'s result as it is.",
                           [e.evidence("outside the kernel") for e in outside[:3]])
    calls = pallas_calls(trace)
    if not calls:
        return CheckResult(False, f"There is no `pallas_call`, so no kernel computes the {what}.")
    if len(calls) > 1:
        return CheckResult(False, f"The {what} is split over {len(calls)} `pallas_call`s: each reads the data from "
                           "HBM again. One kernel must do all of it.", [c.evidence("pallas_call") for c in calls])
    call = calls[0]
    prims = {r.primitive for r in kernel_eqns(call)}
    missing = [(name, how) for name, names, how in steps if not prims & names]
    if missing:
        return CheckResult(False, f"The kernel{line_hint(call)} does not compute "
                           f"{' and '.join(name for name, _ in missing)}: compute "
                           f"{'them' if len(missing) > 1 else 'it'} on the block inside the kernel "
                           f"({', '.join(how for _, how in missing)}).", [call.evidence("pallas_call")])
    done = ", ".join(name for name, _, _ in steps)
    return CheckResult(True, f"The kernel{line_hint(call)} computes {done} on its block, and nothing outside it "
                       "computes.", [call.evidence("pallas_call")])


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
    """The block indices ``index_map[block]`` of ``call`` returns at grid ``point``: the map the verifier ran
    at every grid point (``params["block_table"]``, ``child.JaxprSerializer.index_table``), else evaluated from
    the program's data by the one evaluator of this module (``prefetched_block_indices`` without prefetched
    values); None where neither can say, which a check must take as a failure (nothing that was not evaluated
    passes). Interpret mode on a CPU would clamp a block index past the array's end onto the last block; a
    TPU reads past the array."""
    table = call.params.get("block_table")
    grid = [int(g) for g in call.params.get("grid") or [] if isinstance(g, int)]
    if isinstance(table, list) and 0 <= block < len(table) and isinstance(table[block], list) \
            and len(grid) == len(point) and all(0 <= p < g for p, g in zip(point, grid)):
        flat = 0
        for p, g in zip(point, grid):
            flat = flat * g + p
        if flat < len(table[block]):
            at = table[block][flat]
            if isinstance(at, list) and all(isinstance(a, int) for a in at):
                return list(at)
    return prefetched_block_indices(call, block, point, [])


def grid_points(call: EqnRef) -> list[tuple[int, ...]]:
    """Every point of the call's grid in the order a TPU runs them (the last axis fastest)."""
    return _walk_grid(int(g) if isinstance(g, int) else 0 for g in call.params.get("grid") or [])


def unevaluated(call: EqnRef, blocks: list[int]) -> str | None:
    """A sentence when some block's index map could not be evaluated at some grid point (a check then fails:
    nothing that was not evaluated passes), else None."""
    for b in blocks:
        for point in grid_points(call):
            if block_indices(call, b, point) is None:
                origin = (call.params.get("blocks") or [{}] * (b + 1))[b].get("origin", f"block {b}")
                return (f"The index map of `{origin}`'s block{line_hint(call)} could not be evaluated at grid step "
                        f"{point}: write it with integer arithmetic on the grid indices (`+`, `-`, `*`, `//`, "
                        "`jnp.minimum`, `jnp.maximum`, `jnp.where`), returning one whole number per dimension.")
    return None


def revisited_output(call: EqnRef) -> CheckResult | None:
    """A failing row when an output block is left and later come back to as the grid runs (a TPU writes an
    output block back to HBM when its index changes and never reads it in again, so the second visit starts
    from stale data), or when an output map cannot be evaluated; None when every output block's steps come one
    after another."""
    p = call.params
    blocks = p.get("blocks") or []
    count = int(p.get("num_inputs", len(blocks) - 1))
    for b in range(count, len(blocks)):
        seen: dict[tuple, tuple] = {}
        last = None
        for point in grid_points(call):
            at = block_indices(call, b, point)
            if at is None:
                return CheckResult(False, unevaluated(call, [b]) or "An output index map could not be evaluated.",
                                   [call.evidence("index map")])
            at = tuple(at)
            if at != last and at in seen:
                name = "the output" if len(blocks) - count == 1 else f"output {b - count}"
                return CheckResult(False, f"The grid comes back to {name}'s block {at}{line_hint(call)}: it is "
                                   f"written at grid step {seen[at]}, left, and visited again at step {point}. A TPU "
                                   "writes an output block back to HBM when its index changes and never reads it in "
                                   "again, so the second visit starts from stale data. Order the grid so that each "
                                   "output block's steps come one after another (the reduction axis last).",
                                   [call.evidence("index map")])
            seen.setdefault(at, point)
            last = at
    return None


def _atom_int(atom: dict[str, Any], env: dict[Any, Any]) -> Any:
    """An equation's operand as an index evaluation sees it: a literal whole number, or the variable's value in
    ``env`` (None where either is unknown)."""
    if "lit" in atom:
        value = _literal(atom["lit"])
        return None if value is None or value != int(value) else int(value)
    return env.get(atom.get("id"))


def _literal(text: str) -> float | None:
    """The number a literal's printed form holds (``0``, ``0:i32[]``, ``TypedNdArray(0, dtype=int32)``,
    ``np.int32(0)``, ``Array(0, dtype=int32)``)."""
    m = re.match(r"^\s*(?:TypedNdArray\(|Typed\w*\(|np\.\w+\(|Array\()?\s*(-?\d+(?:\.\d*)?)", str(text))
    return float(m.group(1)) if m else None


def tpu_compiles(trace: Trace, what: str = "The kernel") -> CheckResult:
    """The "Compiles for a TPU v5e" row, from the record the trusted side compiled
    (``grader/verifier/tpu_compile.py``): passed when Mosaic compiled the graded kernel, failed with Mosaic's
    message when it refused, failed with the reason when the compile gave no verdict (out of the run's time or
    memory, a program it could not rebuild, another kernel than the graded one); not checked
    (``checked=False``, never a pass, said in the verdict) only where this server has no TPU compiler, or on
    a Run, whose compile waits for the Submit."""
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
    if record.get("status") == "not_checked" and (record.get("server") or record.get("on_submit")):
        # the one row the grader may leave unchecked: this server has no TPU compiler (the verdict says so),
        # or a Run, whose compile waits for the Submit
        return CheckResult(False, str(record.get("message") or "Not checked."), checked=False)
    return CheckResult(False, str(record.get("message") or "The kernel was not compiled for a TPU v5e, so the "
                                  "row does not hold."))


# ----------------------------------------------------------------------------------------------------
# Scalar prefetch: a kernel's index maps and branches evaluated on prefetched values.
#
# A ``pltpu.PrefetchScalarGridSpec`` hands its first ``num_scalar_prefetch`` operands to every index map
# (after the grid indices) and to the kernel (its first Refs, in SMEM). The trusted side knows the grid and
# chooses the prefetched values itself (every length the constraints allow, say): the index maps and the
# kernel's ``pl.when`` conditions are then evaluated like ``block_indices`` does, with the SMEM reads
# (``lens_ref[i]``) answered from those values.

from grader.toolkit.dataflow import node  # noqa: E402 - this block's own import, kept with it

SCALAR_OPS = {
    **INDEX_OPS,
    "sign": lambda a: (a > 0) - (a < 0), "abs": abs,
    "and": lambda a, b: int(a) & int(b), "or": lambda a, b: int(a) | int(b), "xor": lambda a, b: int(a) ^ int(b),
    "not": lambda a: int(not a), "clamp": lambda lo, a, hi: min(max(a, lo), hi), "multiple_of": lambda a: a,
}
"""``INDEX_OPS`` and what ``jnp`` writes them with (``//`` is a ``div`` corrected by ``sign``, ``rem`` and
``and``; ``pl.multiple_of`` is a hint to the compiler), booleans as 0 and 1."""
PASS_THROUGH = {"jit", "pjit", "closed_call", "core_call"}
_SCALAR_INDEXER = re.compile(r"^PyTreeDef\(\(CustomNode\(NDIndexer\[\(PyTreeDef\(\(\*(?:, \*)*,?\)\), "
                             r"\([\d, ]*\), \(\)\)\], \[\*(?:, \*)*\]\),\)\)$")


def _scalar_get(eqn: dict[str, Any], values: list[Any]) -> int | None:
    """``ref[i, j]`` with scalar indices on a Ref bound to a nested list of ints (a prefetched array)."""
    array, index = values[0], values[1:]
    if not isinstance(array, list) or not _SCALAR_INDEXER.match(str(eqn["params"].get("tree", ""))):
        return None
    for k in index:
        if not isinstance(k, int) or not isinstance(array, list) or not 0 <= k < len(array):
            return None  # (Mosaic does not check an SMEM read's bounds: an index past the end is not a value)
        array = array[k]
    return array if isinstance(array, int) else None


def _whole_array_step(eqn: dict[str, Any], values: list[Any]) -> list | None:
    """A 1-D prefetched array read whole and then indexed (``lens_ref[...][i]``: ``get``, ``dynamic_slice``,
    ``squeeze``), which Mosaic refuses to compile ("Can only load scalars from SMEM") but which computes the
    same values: evaluated, so that the compile row alone says so."""
    prim = eqn["primitive"]
    if prim == "get" and values and isinstance(values[0], list) and len(values) == 1 \
            and str(eqn["params"].get("tree")) == "PyTreeDef(())":
        return [values[0]]
    if prim == "dynamic_slice" and len(values) == 2 and isinstance(values[0], list) and isinstance(values[1], int):
        size = re.match(r"^\((\d+),?\)$", str(eqn["params"].get("slice_sizes", "")))
        array = values[0]
        if size is None or not all(isinstance(a, int) for a in array) or not 0 < int(size.group(1)) <= len(array):
            return None
        start = min(max(values[1], 0), len(array) - int(size.group(1)))  # XLA clamps the start
        return [array[start:start + int(size.group(1))]]
    if prim == "squeeze" and len(values) == 1 and isinstance(values[0], list) and len(values[0]) == 1:
        return [values[0][0]] if isinstance(values[0][0], int) else None
    return None


def _step(eqn: dict[str, Any], values: list[Any], grid: tuple[int, ...], point: tuple[int, ...]) -> list | None:
    """The results of one equation on known scalar values, or None."""
    prim, params = eqn["primitive"], eqn["params"]
    outs = eqn["outvars"]
    whole = _whole_array_step(eqn, values)
    if whole is not None:
        return whole
    if any(v.get("shape") not in (None, []) for v in outs):
        return None
    if prim in ("program_id", "num_programs"):
        axis = params.get("axis")
        if not isinstance(axis, int) or not 0 <= axis < len(point):
            return None
        return [point[axis] if prim == "program_id" else grid[axis]]
    if prim == "get" and values:
        got = _scalar_get(eqn, values)
        return None if got is None else [got]
    if None in values or any(isinstance(v, list) for v in values):
        return None
    if prim == "convert_element_type":
        dtype = outs[0].get("dtype", "")
        return [int(values[0] != 0)] if dtype == "bool" else [int(values[0])] if "int" in dtype else None
    if prim == "not":
        return [1 - values[0]] if outs[0].get("dtype") == "bool" else [~values[0]]
    if prim in SCALAR_OPS and not eqn.get("subjaxprs") and all(
            "int" in v.get("dtype", "") or v.get("dtype") == "bool" for v in outs):
        result = SCALAR_OPS[prim](*values)
        return None if result is None else [int(result)]
    return None


def _scalars(jaxpr: dict[str, Any], env: dict[str, Any], grid: tuple[int, ...], point: tuple[int, ...],
             depth: int = 0) -> dict[str, Any]:
    """``env`` (variable id -> an int, or a nested list for a prefetched Ref) with every scalar of ``jaxpr``
    that can be evaluated added; others are left out (a kernel's vector work is not evaluated)."""
    def read(atom: dict[str, Any]) -> Any:
        return _atom_int(atom, env)

    for eqn in jaxpr["eqns"]:
        values = [read(v) for v in eqn["invars"]]
        inner = eqn.get("subjaxprs", {}).get("jaxpr")
        if eqn["primitive"] in PASS_THROUGH and inner is not None and depth < 8:
            sub = _scalars(inner, {v.get("id"): a for v, a in zip(inner["invars"], values) if a is not None},
                           grid, point, depth + 1)
            out = [sub.get(v.get("id")) if "id" in v else read(v) for v in inner["outvars"]]
        else:
            out = _step(eqn, values, grid, point) or []
        for v, o in zip(eqn["outvars"], out):
            if o is not None and "id" in v:
                env[v["id"]] = o
    return env


def prefetched_block_indices(call: EqnRef, block: int, point: tuple[int, ...],
                             prefetch: list[list[int]]) -> list[int] | None:
    """The block indices ``index_map[block]`` of a scalar-prefetch ``call`` returns at grid ``point`` when
    its scalar-prefetch operands hold ``prefetch`` (one list of ints each, nested for more dimensions), or
    None where it cannot say (a primitive outside ``SCALAR_OPS``, a read that is not one scalar)."""
    sub = call.eqn["subjaxprs"].get(f"index_map[{block}]")
    grid = tuple(call.params.get("grid") or ())
    if sub is None or sub.get("constvars") or len(sub["invars"]) != len(point) + len(prefetch):
        return None
    env = {v.get("id"): a for v, a in zip(sub["invars"], list(point) + list(prefetch))}
    env = _scalars(sub, env, grid, point)
    out = [env.get(v.get("id")) if "id" in v else _literal(v["lit"]) for v in sub["outvars"]]
    return None if any(not isinstance(o, (int, float)) or o != int(o) for o in out) else [int(o) for o in out]


def _sub_name(holder: EqnRef, inner: EqnRef) -> str:
    """The name of ``holder``'s sub-program that holds ``inner`` (``branches[1]``, ``jaxpr``...)."""
    return inner.path[len(holder.path) + 1:].split("/", 1)[0]


def kernel_ref_uses(call: EqnRef, operand: int) -> list[EqnRef]:
    """The kernel equations that use the kernel's Ref number ``operand`` (its inputs in order: the
    scalar-prefetch Refs, the input blocks, the output blocks, the scratch buffers): reads, writes and copies,
    followed into ``pl.when`` branches, loops and nested calls (which are not themselves counted; one the Ref
    cannot be followed into is)."""
    kernel = call.eqn["subjaxprs"].get("jaxpr")
    if kernel is None or not 0 <= operand < len(kernel["invars"]):
        return []
    out: list[EqnRef] = []

    def walk(jaxpr: dict[str, Any], ids: set[str], path: str, ancestors: tuple[EqnRef, ...]) -> None:
        for i, eqn in enumerate(jaxpr["eqns"]):
            ref = EqnRef(eqn, f"{path}{i}", ancestors)
            used = [k for k, v in enumerate(eqn["invars"]) if v.get("id") in ids]
            if not used:
                continue
            subs, params = eqn["subjaxprs"], eqn["params"]
            inner: dict[str, set[str]] = {}
            if eqn["primitive"] == "cond":
                for name, sub in subs.items():
                    inner[name] = {sub["invars"][k - 1]["id"] for k in used if 0 < k <= len(sub["invars"])}
            elif eqn["primitive"] == "while" and {"cond_jaxpr", "body_jaxpr"} <= set(subs):
                cn, bn = int(params.get("cond_nconsts") or 0), int(params.get("body_nconsts") or 0)
                inner["cond_jaxpr"] = {subs["cond_jaxpr"]["invars"][k]["id"] for k in used if k < cn}
                inner["body_jaxpr"] = {subs["body_jaxpr"]["invars"][k - cn]["id"] for k in used
                                       if cn <= k < cn + bn}
                if any(k >= cn + bn for k in used):  # a Ref carried through the loop: not followed
                    inner = {}
            elif (eqn["primitive"] in POSITIONAL_SUBS and len(subs) == 1
                  and len(next(iter(subs.values()))["invars"]) == len(eqn["invars"])):
                name, sub = next(iter(subs.items()))
                inner[name] = {sub["invars"][k]["id"] for k in used}
            if not inner:
                out.append(ref)
                continue
            for name, sub_ids in inner.items():
                if sub_ids:
                    walk(subs[name], sub_ids, f"{ref.path}/{name}/", ancestors + (ref,))

    walk(kernel, {kernel["invars"][operand]["id"]}, f"{call.path}/jaxpr/", call.ancestors + (call,))
    return out


POSITIONAL_SUBS = PASS_THROUGH | {"scan", "run_scoped", "checkpoint", "remat"}
"""Equations whose one sub-program takes their operands one to one (a ``scan``'s consts, carry and slices)."""


def runs_at(call: EqnRef, ref: EqnRef, point: tuple[int, ...], prefetch: list[list[int]]) -> bool | None:
    """Whether kernel equation ``ref`` of a scalar-prefetch ``call`` runs at grid ``point`` when the
    scalar-prefetch operands hold ``prefetch``: every ``cond`` (``pl.when``, ``lax.cond``) that holds it is
    evaluated on the program ids and the SMEM reads, and must pick the branch it sits in. None where a
    condition cannot be evaluated (it depends on a loop's counter or on a vector); a loop on the way is
    taken to run."""
    kernel = call.eqn["subjaxprs"].get("jaxpr")
    grid = tuple(call.params.get("grid") or ())
    at = [k for k, a in enumerate(ref.ancestors) if a.path == call.path]
    chain_ = ref.ancestors[at[0] + 1:] if at else None
    if kernel is None or chain_ is None:
        return None
    k = len(prefetch)
    env: dict[str, Any] = {v.get("id"): a for v, a in zip(kernel["invars"][:k], prefetch)}
    jaxpr = kernel
    for holder, inner in zip(chain_, chain_[1:] + (ref,)):
        env = _scalars(jaxpr, env, grid, point)
        name = _sub_name(holder, inner)
        sub = holder.eqn["subjaxprs"][name]
        if holder.primitive == "cond":
            index = holder.eqn["invars"][0]
            which = _literal(index["lit"]) if "lit" in index else env.get(index.get("id"))
            branch = re.match(r"branches\[(\d+)\]$", name)
            if not isinstance(which, (int, float)) or branch is None:
                return None
            count = sum(1 for n in holder.eqn["subjaxprs"] if n.startswith("branches["))
            if min(max(int(which), 0), count - 1) != int(branch.group(1)):
                return False
            values = [env.get(v.get("id")) for v in holder.eqn["invars"][1:]]
        elif holder.primitive in POSITIONAL_SUBS and len(sub["invars"]) == len(holder.eqn["invars"]):
            values = [env.get(v.get("id")) for v in holder.eqn["invars"]]
            if holder.primitive == "scan":  # its constants are known; the carry and the slices change
                consts = int(holder.params.get("num_consts") or 0)
                values = [v if k < consts or isinstance(v, list) else None for k, v in enumerate(values)]
        elif holder.primitive == "while":  # its constants are known; the counter and the carry change
            cn, bn = int(holder.params.get("cond_nconsts") or 0), int(holder.params.get("body_nconsts") or 0)
            ins = [env.get(v.get("id")) for v in holder.eqn["invars"]]
            values = ins[:cn] if name == "cond_jaxpr" else ins[cn:cn + bn] if name == "body_jaxpr" else []
        else:
            values = []  # a loop's body: its counter and carry are not known
        env = {v.get("id"): a for v, a in zip(sub["invars"], values) if a is not None}
        jaxpr = sub
    return True


def argument_itself(trace: Trace, call: EqnRef, operand: int, name: str) -> tuple[bool, list[EqnRef]]:
    """Whether operand ``operand`` of ``call`` is argument ``name`` as given: every value it is made from
    comes from ``name`` alone, through views only (a reshape, a cast to its own dtype). Returns the verdict
    and the equations that compute it otherwise (for the message)."""
    atom = call.eqn["invars"][operand] if 0 <= operand < len(call.eqn["invars"]) else {}
    target = node(call.scope, atom)
    if target is None:
        return False, []
    back = trace.flow.sources_of([target])
    own = set(trace.inputs(name))
    others = [n for n in trace.flow.inputs if n in back and n not in own]
    computing = []
    for n in back:
        made = trace.flow.made_by.get(n)
        if made is None:
            continue
        ref = trace.eqn_at.get(made[0])
        if ref is not None and not _is_view(ref) and not any(a.primitive == "pallas_call" for a in ref.ancestors):
            computing.append(ref)
    return bool(own & back) and not others and not computing, computing


# ------------------------------------------------------------------------------------------------------
# A kernel's state across grid steps: the Refs it reads and writes, and the grid steps a write runs at
# (added for the flash attention problem; generic over any kernel).

REF_READS = {"get", "load", "masked_load"}
REF_WRITES = {"swap", "addupdate", "masked_swap", "store"}
"""The primitives a kernel reads a Ref with (the Ref is the first operand) and writes one with (the Ref,
then the value written)."""
HUBS = ("|eqn", "|control", "|in", "|out")
"""The data-flow graph's joining nodes (``Flow``): not variables, so no value passes through one unchanged."""


class KernelFlow:
    """The exact data flow of one ``pallas_call``'s kernel, Refs included: a value written to a Ref (``swap``,
    ``addupdate``) flows into that Ref, and from it into every later (and, across grid steps, earlier) read,
    so a value kept in a scratch buffer from one step to the next is followed. Nodes are named as the
    program's own (``<call path>/jaxpr/...|<var id>``), so ``EqnRef.out_nodes`` of ``kernel_eqns(call)`` are
    nodes of this graph. ``refs[i]`` is the node of the kernel's ``i``-th Ref (scalar-prefetch operands,
    then one per input block, one per output block, then the scratch buffers)."""

    def __init__(self, call: EqnRef) -> None:
        from grader.toolkit.dataflow import Flow
        kernel = call.eqn["subjaxprs"].get("jaxpr") or {"invars": [], "outvars": [], "eqns": []}
        self.call, self.prefix = call, f"{call.path}/jaxpr/"
        self.flow = Flow({"invars": [], "outvars": [], "eqns": []})
        self.flow._build(kernel, self.prefix)
        self.refs = [node(self.prefix, a) for a in kernel["invars"]]
        self.eqns = kernel_eqns(call)
        self.writes: list[tuple[EqnRef, int, Node | None]] = []
        """(the write, the kernel Ref it writes, the node of the value written)."""
        for r in self.eqns:
            if r.primitive in REF_WRITES and len(r.eqn["invars"]) >= 2:
                ref = self.ref_index(node(r.scope, r.eqn["invars"][0]))
                value = node(r.scope, r.eqn["invars"][1])
                if ref is not None:
                    self.writes.append((r, ref, value))
                    self.flow._edge(value, self.refs[ref])

    def ref_index(self, n: Node | None) -> int | None:
        """Which kernel Ref a Ref operand inside the kernel (in a branch, a loop, a nested call) is."""
        for _ in range(64):
            if n is None:
                return None
            if n in self.refs:
                return self.refs.index(n)
            preds = self.flow.back.get(n, [])
            if len(preds) != 1 or preds[0].endswith(HUBS):
                return None
            n = preds[0]
        return None

    def reads(self, ref: int) -> list[EqnRef]:
        """The equations that read kernel Ref ``ref``."""
        return [r for r in self.eqns if r.primitive in REF_READS and r.eqn["invars"]
                and self.ref_index(node(r.scope, r.eqn["invars"][0])) == ref]

    def reach(self, *refs: int) -> set[Node]:
        """Every node computed from the kernel Refs ``refs`` (through values kept in other Refs too)."""
        return self.flow.reach([self.refs[i] for i in refs])

    def sources(self, n: Node | None) -> set[Node]:
        """Every node the value ``n`` is computed from (Refs included)."""
        return self.flow.sources_of([n])

    def primitives(self, nodes: set[Node]) -> set[str]:
        """The primitives that make the given nodes."""
        return {self.flow.made_by[n][1]["primitive"] for n in nodes if n in self.flow.made_by}

    def steps(self, r: EqnRef) -> set[tuple[int, ...]] | None:
        """The grid points at which the kernel equation ``r`` runs: those where every ``cond`` around it (what
        ``pl.when`` traces to) takes the branch that holds it, evaluated at each point by the module's one
        evaluator (``runs_at``); None where a condition cannot be evaluated (it depends on data)."""
        points = set()
        for p in grid_points(self.call):
            runs = runs_at(self.call, r, p, [])
            if runs is None:
                return None
            if runs:
                points.add(p)
        return points
