"""Requirement checks for the ragged row sums: the ``pallas_call``'s grid and blocks as data, its index maps
and its kernel's ``pl.when`` conditions evaluated on prefetched lengths the grader chooses, and the TPU v5e
compile record the trusted side made (``grader.toolkit.tpu_compiles``).

Interpret mode copies whatever block an index map names (clamped into the array) and a masked block adds
nothing, so the numbers cannot tell which blocks a TPU would copy or which steps do work. The trusted side
knows the grid and the range of the lengths (0 to N), so it evaluates ``x``'s index map
(``prefetched_block_indices``) and the conditions around every read of the ``x`` block (``kernel_ref_uses``,
``runs_at``) at every grid step, for every length in every row block (row blocks of different lengths, so a
length read for the wrong row block shows). That evaluation assumes the prefetched operand is ``lengths``
as given (``argument_itself``). Both rows also ask that the call carry the answer (``carries``: its result
replaced, the output moves), so a decorative kernel beside a `jnp` sum passes neither.
"""
from grader.toolkit import (CheckResult, Trace, argument_itself, block_indices, carries, computed_outside,
                            kernel_ref_uses, line_hint, pallas_calls, prefetched_block_indices, runs_at,
                            tpu_compiles)


def _sizes(trace: Trace):
    m, n = trace.args["x"]
    return m, n, trace.args["bm"], trace.args["bn"]


def _scenarios(rows: int, n: int) -> list[list[int]]:
    """Lengths for every row block: each length from 0 to N in every row block, and in each scenario the
    row blocks' lengths different from each other (a stride coprime to N + 1), so a length read for another
    row block shows."""
    stride = next(d for d in range(n // 2 + 1, n + 1) if all((d * k) % (n + 1) for k in range(1, n + 1)))
    return [[(s + stride * r) % (n + 1) for r in range(rows)] for s in range(n + 1)]


def _one_call(trace: Trace):
    calls = pallas_calls(trace)
    if len(calls) != 1:
        return None, CheckResult(False, f"Expected one `pallas_call`, found {len(calls)}: sum the rows with "
                                 "`pl.pallas_call(kernel, grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, "
                                 "...), out_shape=...)(lengths, x)`.", [c.evidence("pallas_call") for c in calls])
    return calls[0], None


def _carrying(trace: Trace, call) -> CheckResult | None:
    """None when the call's result moves the output (the row is about the call that computes it)."""
    carry = carries(trace, call, what="the `pallas_call`")
    if carry.ok:
        return None
    return CheckResult(False, carry.message() + " This row reads the call that computes the sums: return its "
                       "result.", [call.evidence("pallas_call that does not carry the answer")])


def _x_block(call, m: int, n: int):
    p = call.params
    blocks = p.get("blocks") or []
    count = p.get("num_inputs", len(blocks) - 1)
    return next((k for k in range(count) if blocks[k]["array_shape"] == [m, n]), None)


def _prefetched(trace: Trace, call) -> CheckResult | None:
    """None when ``lengths`` itself is the call's one scalar-prefetch operand; the failure otherwise."""
    k = call.params.get("num_scalar_prefetch") or 0
    if k != 1:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} has {k} scalar-prefetch operands; "
                           "prefetch `lengths` with `pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, ...)` and "
                           "call it as `pl.pallas_call(...)(lengths, x)`, so the index maps and the kernel can "
                           "read the lengths from SMEM before any block is copied.", [call.evidence("pallas_call")])
    itself, computing = argument_itself(trace, call, 0, "lengths")
    if not itself:
        what = (f" (`{computing[0].primitive}`{line_hint(computing[0])} computes it)" if computing else "")
        return CheckResult(False, f"The prefetched operand of the `pallas_call`{line_hint(call)} is not `lengths` "
                           f"as given{what}: prefetch `lengths` itself, and compute from it in the index maps "
                           "and the kernel.", [call.evidence("scalar-prefetch operand")]
                           + [r.evidence("computed before the call") for r in computing[:2]])
    return None


def pallas_grid(trace: Trace) -> CheckResult:
    m, n, bm, bn = _sizes(trace)
    call, failed = _one_call(trace)
    if failed:
        return failed
    p = call.params
    want_grid = [m // bm, n // bn]
    if p.get("grid") != want_grid:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} runs over the grid {tuple(p.get('grid') or ())}; "
                           f"for M={m}, N={n} with bm={bm}, bn={bn} it should be {tuple(want_grid)}: "
                           "(M // bm, N // bn), the column blocks last.", [call.evidence("grid")])
    blocks = p.get("blocks") or []
    count = p.get("num_inputs", len(blocks) - 1)
    if count != 1 or len(blocks) != 2:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} takes {count} blocked operands and gives "
                           f"{len(blocks) - count} results; `x` is its one blocked operand (the lengths are "
                           "prefetched, not blocked), and it gives one result.", [call.evidence("blocks")])
    for name, got, array, block in (("`x`", blocks[0], [m, n], [bm, bn]), ("the output", blocks[1], [m, 1], [bm, 1])):
        if got["array_shape"] != array or got["block_shape"] != block:
            return CheckResult(False, f"The block of {name} (`{got['origin']}`, an array of shape "
                               f"{tuple(got['array_shape'])}) is {tuple(got['block_shape'])}; it should be "
                               f"{tuple(block)} of the {tuple(array)} array.", [call.evidence("block")])
    prefetch = p.get("num_scalar_prefetch") or 0
    for lengths in _scenarios(m // bm, n)[:: max(1, n // 4)]:
        for i in range(m // bm):
            for j in range(n // bn):
                at = (prefetched_block_indices(call, 1, (i, j), [lengths]) if prefetch == 1
                      else block_indices(call, 1, (i, j)) if prefetch == 0 else None)
                if at is None:
                    return CheckResult(False, f"At grid step {(i, j)} the output's index map{line_hint(call)} could "
                                       "not be evaluated: write it with integer arithmetic on the grid indices, "
                                       f"returning {(i, 0)} at step {(i, j)}.", [call.evidence("index map")])
                if at != [i, 0]:
                    return CheckResult(False, f"At grid step {(i, j)} the output's index map{line_hint(call)} "
                                       f"returns {tuple(at)}; it should be {(i, 0)}: the sums of row block {i}.",
                                       [call.evidence("index map")])
    outside = computed_outside(trace, "x")
    if outside:
        r = outside[0]
        return CheckResult(False, f"`{r.primitive}`{line_hint(r)} runs outside the kernel on `x` or on the "
                           "call's result: one more pass in HBM. Return the `pallas_call`'s result as it is, "
                           "with everything (masks, zeros for empty rows) done in the kernel.",
                           [e.evidence("outside the kernel") for e in outside[:3]])
    carry = carries(trace, call, around_from=("x", "lengths"), what="the `pallas_call`")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the `pallas_call`'s result itself.",
                           [call.evidence("pallas_call that does not carry the answer")] + carry.around_evidence)
    return CheckResult(True, f"One `pallas_call`{line_hint(call)} over the grid {tuple(want_grid)} with blocks "
                       f"{(bm, bn)} of `x` and {(bm, 1)} of the output, and the result comes from it.",
                       [call.evidence("pallas_call")])


def scalar_prefetch(trace: Trace) -> CheckResult:
    m, n, bm, bn = _sizes(trace)
    call, failed = _one_call(trace)
    if failed:
        return failed
    failed = _carrying(trace, call) or _prefetched(trace, call)
    if failed:
        return failed
    grid = call.params.get("grid") or []
    block = _x_block(call, m, n)
    if len(grid) != 2 or block is None:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} has no grid of row blocks by column blocks "
                           f"with a block of `x`, so its index map cannot be read for the column block of step "
                           "`(i, j)`: use the grid `(M // bm, N // bn)`.", [call.evidence("grid")])
    width = call.params["blocks"][block]["block_shape"][1] or 1
    count = -(-n // width)
    for lengths in _scenarios(grid[0], n):
        for i in range(grid[0]):
            big = lengths[i] if i < len(lengths) else 0
            for j in range(grid[1]):
                at = prefetched_block_indices(call, block, (i, j), [lengths])
                step = f"At grid step {(i, j)} with row block {i}'s length {big}, `x`'s index map{line_hint(call)}"
                if at is None:
                    return CheckResult(False, f"{step} could not be evaluated: write it with integer arithmetic "
                                       "on the grid indices and one prefetched length, `lens[i]` (`jnp.minimum`, "
                                       "`jnp.maximum`, `//`).", [call.evidence("index map")])
                if len(at) != 2 or at[0] != i:
                    return CheckResult(False, f"{step} returns {tuple(at)}; its row block should be {i}.",
                                       [call.evidence("index map")])
                col = at[1]
                if not 0 <= col < count:
                    return CheckResult(False, f"{step} returns column block {col}, outside the {count} blocks of "
                                       "the row: interpret mode clamps it into the array, while on a TPU v5e a block "
                                       "outside the array fails at run time (block -1 halted the core on a chip). Clamp with `jnp.maximum(lens[i] - 1, 0) // bn`, which is "
                                       "block 0 at length 0.", [call.evidence("index map")])
                if j * width < big and col != j:
                    return CheckResult(False, f"{step} returns column block {col}; block {j} starts at column "
                                       f"{j * width}, before the length, and must be copied.",
                                       [call.evidence("index map")])
                if j * width >= big and big and col * width >= big:
                    return CheckResult(False, f"{step} returns column block {col}, which starts at column "
                                       f"{col * width}, at or past the length: a copy of padding from HBM. Clamp "
                                       "the column block to the last one that starts before the length, "
                                       "`jnp.minimum(j, jnp.maximum(lens[i] - 1, 0) // bn)`.",
                                       [call.evidence("index map")])
    return CheckResult(True, f"`lengths` is the one scalar-prefetch operand of the `pallas_call`{line_hint(call)}, "
                       f"and `x`'s index map clamps with it: evaluated at every grid step for every length from 0 to "
                       f"{n}, it copies every block that starts before the length and none past it.",
                       [call.evidence("pallas_call")])


def skips_past_length(trace: Trace) -> CheckResult:
    m, n, bm, bn = _sizes(trace)
    call, failed = _one_call(trace)
    if failed:
        return failed
    failed = _carrying(trace, call)
    if failed:
        return failed
    failed = _prefetched(trace, call)
    if failed:
        return CheckResult(False, failed.message + " (Without it no condition in the kernel can be read from "
                           "the lengths.)", failed.evidence)
    grid = call.params.get("grid") or []
    block = _x_block(call, m, n)
    if len(grid) != 2 or block is None:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} has no grid of row blocks by column blocks "
                           "with a block of `x`: use the grid `(M // bm, N // bn)`.", [call.evidence("grid")])
    width = call.params["blocks"][block]["block_shape"][1] or 1
    reads = kernel_ref_uses(call, 1 + block)
    if not reads:
        return CheckResult(False, f"The kernel{line_hint(call)} never reads its block of `x`.",
                           [call.evidence("pallas_call")])
    for lengths in _scenarios(grid[0], n):
        for i in range(grid[0]):
            big = lengths[i] if i < len(lengths) else 0
            for j in range(grid[1]):
                want = j * width < big
                for r in reads:
                    runs = runs_at(call, r, (i, j), [lengths])
                    where = f"The read of the `x` block `{r.primitive}`{line_hint(r)}"
                    if runs is None:
                        return CheckResult(False, f"{where} sits under a condition the grader cannot evaluate "
                                           "from the grid indices and the prefetched lengths: put it under "
                                           "`pl.when(j * bn < lens_ref[i])` at the kernel's top level.",
                                           [r.evidence("read of x")])
                    if runs and not want:
                        return CheckResult(False, f"{where} runs at grid step {(i, j)}, where row block {i}'s "
                                           f"length is {big} and the block starts at column {j * width}, at or "
                                           "past it: work on padding. Put the read and the add under "
                                           "`pl.when(j * bn < length)`, with `length = lens_ref[i]`.",
                                           [r.evidence("read of x past the length")])
                    if want and not runs:
                        return CheckResult(False, f"{where} does not run at grid step {(i, j)}, where row block "
                                           f"{i}'s length is {big} and the block starts at column {j * width}, "
                                           "before it: its entries are part of the sum.", [r.evidence("read of x")])
    return CheckResult(True, f"The kernel reads its `x` block only under a condition on the prefetched length"
                       f"{line_hint(reads[0])}: evaluated at every grid step for every length from 0 to {n}, it runs "
                       "exactly for the blocks that start before the length.", [r.evidence("read of x") for r in reads])


def compiles_for_tpu(trace: Trace) -> CheckResult:
    return tpu_compiles(trace)


CHECKS = {"pallas-grid": pallas_grid, "scalar-prefetch": scalar_prefetch, "skips-past-length": skips_past_length,
          "compiles-for-tpu-v5e": compiles_for_tpu}
