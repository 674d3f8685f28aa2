"""Requirement checks for the blocked matmul: the ``pallas_call``'s grid and blocks as data, its kernel's
equations, and the TPU v5e compile record the trusted side made (``grader.toolkit.tpu_compiles``).

The call must carry the answer (``carries``: its result replaced, the output moves; `a` and `b` reach the
output only through it), so a decorative kernel beside a `jnp.dot`, or a kernel whose output is thrown
away, fails ``pallas-grid``; the products must be inside the kernel (``work-in-kernel``).
"""
from grader.toolkit import (CheckResult, Trace, block_indices, carries, grid_points, kernel_eqns, line_hint,
                            outside_kernels, pallas_calls, program_id_test, revisited_output, tpu_compiles, unevaluated)

MATMULS = {"dot_general", "conv_general_dilated"}


def _sizes(trace: Trace):
    m, k = trace.args["a"]
    n = trace.args["b"][1]
    return m, k, n, trace.args["bm"], trace.args["bn"], trace.args["bk"]


def pallas_grid(trace: Trace) -> CheckResult:
    calls = pallas_calls(trace)
    m, k, n, bm, bn, bk = _sizes(trace)
    if len(calls) != 1:
        return CheckResult(False, f"Expected one `pallas_call`, found {len(calls)}: compute the product with "
                           "`pl.pallas_call(kernel, grid=..., in_specs=..., out_specs=...)(a, b)`.",
                           [c.evidence("pallas_call") for c in calls])
    call = calls[0]
    p = call.params
    want_grid = [m // bm, n // bn, k // bk]
    if p.get("grid") != want_grid:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} runs over the grid {tuple(p.get('grid') or ())}; "
                           f"for M={m}, N={n}, K={k} with bm={bm}, bn={bn}, bk={bk} it should be "
                           f"{tuple(want_grid)}: (M // bm, N // bn, K // bk), the contraction axis last.",
                           [call.evidence("grid")])
    blocks = p.get("blocks") or []
    want = [("a", [m, k], [bm, bk]), ("b", [k, n], [bk, bn]), ("the output", [m, n], [bm, bn])]
    if len(blocks) != 3 or p.get("num_scalar_prefetch"):
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} takes {len(blocks) - 1} blocked operands; "
                           "give it `a` and `b` with one `BlockSpec` each, and one for the output.",
                           [call.evidence("blocks")])
    for (name, array, block), got in zip(want, blocks):
        if got["array_shape"] != array or got["block_shape"] != block:
            return CheckResult(False, f"The block of {name} (`{got['origin']}`, an array of shape "
                               f"{tuple(got['array_shape'])}) is {tuple(got['block_shape'])}; it should be "
                               f"{tuple(block)} of the {tuple(array)} array.", [call.evidence("block")])
    revisit = revisited_output(call)
    if revisit is not None:
        return revisit
    for i, j, kk in grid_points(call):
        for b, (name, _, _), wanted in zip(range(3), want, ([i, kk], [kk, j], [i, j])):
            at = block_indices(call, b, (i, j, kk))
            if at is None:
                return CheckResult(False, unevaluated(call, [b]) or "An index map could not be evaluated.",
                                   [call.evidence("index map")])
            if at != wanted:
                return CheckResult(False, f"At grid step {(i, j, kk)} the index map of {name}'s block"
                                   f"{line_hint(call)} returns {tuple(at)}; it should be {tuple(wanted)}: step "
                                   "(i, j, kk) multiplies block (i, kk) of `a` by block (kk, j) of `b` into output "
                                   "tile (i, j).", [call.evidence("index map")])
    carry = carries(trace, call, around_from=("a", "b"), what="the `pallas_call`")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the `pallas_call`'s result itself.",
                           [call.evidence("pallas_call that does not carry the answer")] + carry.around_evidence)
    return CheckResult(True, f"One `pallas_call`{line_hint(call)} over the grid {tuple(want_grid)} with blocks "
                       f"{(bm, bk)}, {(bk, bn)} and {(bm, bn)}, and the result comes from it.",
                       [call.evidence("pallas_call")])


def work_in_kernel(trace: Trace) -> CheckResult:
    outside = [r for r in outside_kernels(trace) if r.primitive in MATMULS]
    if outside:
        r = outside[0]
        return CheckResult(False, f"A matrix product is computed outside the kernel (`{r.primitive}`{line_hint(r)}): "
                           "the products belong inside the kernel, on the blocks it is handed.",
                           [x.evidence("matrix product outside the kernel") for x in outside])
    calls = pallas_calls(trace)
    if not calls:
        return CheckResult(False, "There is no `pallas_call`, so no kernel computes the products.")
    dots = [r for c in calls for r in kernel_eqns(c) if r.primitive == "dot_general"]
    if not dots:
        return CheckResult(False, "The kernel computes no matrix product: multiply the blocks with "
                           "`jnp.dot(a_ref[...], b_ref[...], preferred_element_type=jnp.float32)`.",
                           [c.evidence("pallas_call") for c in calls])
    good = [d for d in dots if "float32" in str(d.params.get("preferred_element_type"))
            and d.eqn["outvars"][0]["dtype"] == "float32"
            and all(v["dtype"] == "bfloat16" for v in d.eqn["invars"])]
    if not good:
        d = dots[0]
        return CheckResult(False, f"The kernel's product{line_hint(d)} multiplies {d.eqn['invars'][0]['dtype']} by "
                           f"{d.eqn['invars'][1]['dtype']} into {d.eqn['outvars'][0]['dtype']}; multiply the bfloat16 "
                           "blocks themselves and accumulate in float32 with `preferred_element_type=jnp.float32`.",
                           [d.evidence("product")])
    d = good[0]
    return CheckResult(True, f"The kernel multiplies the bfloat16 blocks into float32{line_hint(d)}, and nothing "
                       "outside it computes a matrix product.", [d.evidence("product in the kernel")])


def init_guarded(trace: Trace) -> CheckResult:
    calls = pallas_calls(trace)
    for call in calls:
        for r in kernel_eqns(call):
            if r.primitive != "cond":
                continue
            holder = r.ancestors[-1].eqn["subjaxprs"]
            jaxpr = next((j for j in holder.values() if any(e is r.eqn for e in j["eqns"])), None)
            if jaxpr is None or not program_id_test(r, jaxpr, axis=2, value=0):
                continue
            taken = r.eqn["subjaxprs"].get("branches[1]")
            if taken and any(e["primitive"] in ("swap", "addupdate") for e in taken["eqns"]):
                return CheckResult(True, f"The accumulator is written under `pl.program_id(2) == 0`{line_hint(r)}.",
                                   [r.evidence("init guarded by the program id")])
    return CheckResult(False, "No write in the kernel is guarded by `pl.program_id(2) == 0`: zero the accumulator "
                       "in a function under `@pl.when(pl.program_id(2) == 0)`, so it happens once per output tile, "
                       "at the first step of the contraction axis.", [c.evidence("pallas_call") for c in calls])


def compiles_for_tpu(trace: Trace) -> CheckResult:
    return tpu_compiles(trace)


CHECKS = {"pallas-grid": pallas_grid, "work-in-kernel": work_in_kernel, "init-guarded": init_guarded,
          "compiles-for-tpu-v5e": compiles_for_tpu}
