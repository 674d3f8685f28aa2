"""Requirement checks for the fused row softmax: the ``pallas_call``'s grid and blocks as data, its kernel's
equations, and the TPU v5e compile record the trusted side made (``grader.toolkit.tpu_compiles``).

The call must carry the answer (``carries``: its result replaced, the output moves; `x` reaches the output
only through it), so a decorative kernel beside `jax.nn.softmax`, or a kernel whose output is thrown away,
fails ``pallas-grid``. ``fused-in-kernel`` asks for the whole softmax in that kernel: the row maximum, the
exponentials and their sum among the kernel's equations (its loops' and branches' too: `jax.nn.softmax` or
a `fori_loop` over rows inside the kernel counts), and nothing outside the kernel but moving the data
(a reshape, a cast): any arithmetic outside is one more pass over the matrix in HBM.
"""
from grader.toolkit import (CheckResult, Trace, block_indices, carries, kernel_eqns, line_hint, outside_kernels,
                            pallas_calls, tpu_compiles)

DATA_MOVES = {"pallas_call", "reshape", "convert_element_type", "squeeze", "expand_dims", "copy", "copy_p",
              "jit", "pjit", "closed_call", "core_call"}
"""What may run outside the kernel: the call itself, moving or casting the data, and the calls that hold it."""

STEPS = [("the row maximum", {"reduce_max"}, "`jnp.max(x, axis=-1, keepdims=True)`"),
         ("the exponentials", {"exp", "exp2"}, "`jnp.exp(x - m)`"),
         ("their sum", {"reduce_sum"}, "`jnp.sum(e, axis=-1, keepdims=True)`")]


def _sizes(trace: Trace):
    m, n = trace.args["x"]
    return m, n, trace.args["bm"]


def pallas_grid(trace: Trace) -> CheckResult:
    calls = pallas_calls(trace)
    m, n, bm = _sizes(trace)
    if len(calls) != 1:
        passes = " (each one more pass over the matrix in HBM)" if len(calls) > 1 else ""
        return CheckResult(False, f"Expected one `pallas_call`, found {len(calls)}{passes}: compute the softmax with "
                           "`pl.pallas_call(kernel, grid=(M // bm,), in_specs=..., out_specs=...)(x)`.",
                           [c.evidence("pallas_call") for c in calls])
    call = calls[0]
    p = call.params
    want_grid = [m // bm]
    if p.get("grid") != want_grid:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} runs over the grid {tuple(p.get('grid') or ())}; "
                           f"for M={m} with bm={bm} it should be {tuple(want_grid)}: (M // bm,), one step per "
                           "block of rows.", [call.evidence("grid")])
    blocks = p.get("blocks") or []
    if len(blocks) != 2 or p.get("num_scalar_prefetch"):
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} takes {max(len(blocks) - 1, 0)} blocked operands; "
                           "give it `x` with one `BlockSpec`, and one for the output.", [call.evidence("blocks")])
    for name, got in zip(("x", "the output"), blocks):
        if got["array_shape"] != [m, n] or got["block_shape"] != [bm, n]:
            return CheckResult(False, f"The block of {name} (`{got['origin']}`, an array of shape "
                               f"{tuple(got['array_shape'])}) is {tuple(got['block_shape'])}; it should be "
                               f"{(bm, n)}: `bm` whole rows of the {(m, n)} array.", [call.evidence("block")])
    for b, name in enumerate(("x", "the output")):
        for step in range(m // bm):
            got = block_indices(call, b, (step,))
            if got is not None and got != [step, 0]:
                return CheckResult(False, f"At grid step {step} the index map of {name}'s block{line_hint(call)} "
                                   f"returns {tuple(got)}; it should be {(step, 0)}: "
                                   + (f"row {step}" if bm == 1 else f"rows {step * bm} to {(step + 1) * bm - 1}")
                                   + f", all {n} columns. (Interpret mode clamps a block index "
                                   "past the array's end onto the last block, so the numbers can look right; a "
                                   "TPU reads past the array.)", [call.evidence("index map")])
    carry = carries(trace, call, around_from=("x",), what="the `pallas_call`")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the `pallas_call`'s result itself.",
                           [call.evidence("pallas_call that does not carry the answer")] + carry.around_evidence)
    return CheckResult(True, f"One `pallas_call`{line_hint(call)} over the grid {tuple(want_grid)} with blocks of "
                       f"{(bm, n)}, and the result comes from it.", [call.evidence("pallas_call")])


def fused_in_kernel(trace: Trace) -> CheckResult:
    outside = [r for r in outside_kernels(trace) if r.primitive not in DATA_MOVES]
    if outside:
        r = outside[0]
        return CheckResult(False, f"`{r.primitive}`{line_hint(r)} runs outside the kernel: every operation outside "
                           "it is one more pass over the matrix in HBM. Compute the whole softmax in the kernel and "
                           "return the `pallas_call`'s result as it is.",
                           [x.evidence("outside the kernel") for x in outside[:3]])
    calls = pallas_calls(trace)
    if not calls:
        return CheckResult(False, "There is no `pallas_call`, so no kernel computes the softmax.")
    if len(calls) > 1:
        return CheckResult(False, f"The softmax is split over {len(calls)} `pallas_call`s: each reads the matrix from "
                           "HBM again. One kernel must take the maximum, exponentiate, sum and divide.",
                           [c.evidence("pallas_call") for c in calls])
    call = calls[0]
    prims = {r.primitive for r in kernel_eqns(call)}
    missing = [(what, how) for what, names, how in STEPS if not prims & names]
    if missing:
        what = " and ".join(w for w, _ in missing)
        how = ", ".join(h for _, h in missing)
        return CheckResult(False, f"The kernel{line_hint(call)} does not compute {what}: take them on the block "
                           f"inside the kernel ({how}).", [call.evidence("pallas_call")])
    return CheckResult(True, f"The kernel{line_hint(call)} takes each row's maximum, exponentiates, sums and "
                       "normalises its block, and nothing outside it computes.", [call.evidence("pallas_call")])


def compiles_for_tpu(trace: Trace) -> CheckResult:
    return tpu_compiles(trace)


CHECKS = {"pallas-grid": pallas_grid, "fused-in-kernel": fused_in_kernel, "compiles-for-tpu-v5e": compiles_for_tpu}
