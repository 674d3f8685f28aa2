"""Requirement checks for gradient-accumulation-with-scan, read off the traced program.

Each required structure must also carry the answer (``grader/toolkit/carries.py``): the scan's results must be what
the function returns, computed from `x` and `y` by no other path. Where autodiff is called is read from the
submitted source (``Trace.source``), never from the marks on the traced program's equations. Which rows each step reads is measured, not guessed: the child moves one
microbatch's rows at a time and sees which steps change (``Trace.step_reads``).
"""
from math import prod

from grader.toolkit import (AUTODIFF, MATMUL, REVERSE, SCAN, CheckResult, EqnRef, Evidence, Trace, body_eqns, carries,
                            find, from_inputs, groups, is_backward_autodiff, iter_eqns, line_hint,
                            relative_name_stack, var_id)

# Cutting a microbatch out of the batch, and operations that only move data around.
INDEXING = {"dynamic_slice", "gather", "slice", "dynamic_index_in_dim"}
SHAPE_ONLY = {"reshape", "transpose", "convert_element_type", "squeeze", "expand_dims", "broadcast_in_dim",
              "copy", "copy_p", "rev"}


def _sizes(trace: Trace) -> tuple[int, int, int]:
    batch = trace.args["x"][0]
    n = trace.args["num_microbatches"]
    return batch, n, batch // n


def _stacked_gradients(scan: EqnRef, trace: Trace, n: int) -> list[dict]:
    """Per-step outputs shaped like a stack of parameter gradients, ``(n,) + param.shape``."""
    num_carry = int(scan.params.get("num_carry", 0) or 0)
    param_shapes = {tuple(v) for v in trace.args["params"].values()}
    return [a for a in scan.eqn["outvars"][num_carry:]
            if len(a["shape"]) >= 2 and a["shape"][0] == n and tuple(a["shape"][1:]) in param_shapes]


def one_scan(trace: Trace) -> CheckResult:
    batch, n, _ = _sizes(trace)
    scans = find(trace.jaxpr, SCAN)
    fake = [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]
    if not scans and fake:
        return CheckResult(False, f"The traced program has no `lax.scan`; `{fake[0].primitive[8:]}`"
                           f"{line_hint(fake[0])} is a primitive your code defined itself, not JAX's. Use "
                           "`jax.lax.scan` (or `jax.lax.fori_loop` with fixed bounds).",
                           [r.evidence("not a JAX primitive") for r in fake[:3]])
    if not scans:
        loops = find(trace.jaxpr, {"while"})
        seen = (" It has a `while` loop instead, which is not a scan of known length." if loops else
                " A Python `for` loop is unrolled into the trace, and `vmap` batches the microbatches without "
                "walking them one at a time.")
        return CheckResult(False, "The traced program contains no `lax.scan`." + seen +
                           " Stack the microbatches and walk them with one `jax.lax.scan`.",
                           [r.evidence("loop") for r in loops])
    if len(scans) > 1:
        differentiated = [s for s in scans if s.params.get("reverse") is True]
        why = (" The extra scan runs in reverse under autodiff: that is what `jax.grad` adds when it "
               "differentiates *through* a scan. Call `jax.value_and_grad` inside the scan body instead."
               if differentiated else " Use a single scan over the microbatches, with no scan nested in it.")
        return CheckResult(False, f"The traced program contains {len(scans)} scans, not one." + why,
                           [s.evidence(f"scan of length {s.params.get('length')}") for s in scans])
    scan = scans[0]
    length = scan.params.get("length")
    if length != n:
        hint = (" It looks like a scan over single examples; scan over the stacked microbatches, "
                "`x.reshape(num_microbatches, -1, x.shape[1])`." if length == batch else "")
        return CheckResult(False, f"The scan{line_hint(scan)} runs {length} steps, but num_microbatches is "
                           f"{n} (B = {batch})." + hint, [scan.evidence(f"length {length}, expected {n}")])
    stacked = _stacked_gradients(scan, trace, n) if n > 1 else []
    num_carry = int(scan.params.get("num_carry", 0) or 0)
    per_step = [node_ for node_ in scan.out_nodes[num_carry:]]
    from_stack = [trace.output_names[k] for k in trace.flow.outputs_reached(per_step)
                  if k in trace.output_index("grads")]
    if from_stack and not stacked:
        return CheckResult(False, f"The scan{line_hint(scan)} returns a value for every step (its stacked outputs), "
                           f"and {', '.join(f'`{g}`' for g in from_stack[:4])} "
                           f"{'is' if len(from_stack) == 1 else 'are'} computed from them after the scan instead of "
                           "being accumulated in its carry. Keep the running sums of the loss and gradients in the "
                           "carry, step by step.", [scan.evidence("per-step outputs used after the scan")])
    if stacked:
        return CheckResult(False, f"The scan{line_hint(scan)} stacks every microbatch's gradient as an output "
                           f"(shape {tuple(stacked[0]['shape'])}) and leaves the sum for afterwards, as `lax.map` "
                           "does. Accumulate the gradients in the scan's carry, so only one running sum is kept.",
                           [scan.evidence("gradients stacked, not accumulated")])
    carry = carries(trace, scan, around_from=("x", "y"), what="the scan")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Accumulate the loss and the gradients in the scan's "
                           "carry and return what the scan computes.",
                           [scan.evidence("scan that does not carry the answer")] + carry.around_evidence)
    return CheckResult(True, f"One `lax.scan` of length {n}{line_hint(scan)}, and the loss and gradients come "
                       "from it.", [scan.evidence(f"scan of length {n}")])


LOOP_APIS = ("scan", "fori_loop", "map")
"""Source structures whose function is a scan body (``lax.fori_loop`` with fixed bounds and ``lax.map`` run
as a scan; how many scans there are and of what length is ``one-scan``'s business)."""


def grad_inside_scan(trace: Trace) -> CheckResult:
    """Decided from facts the trusted side establishes: the source's calls (parsed, never run) say where
    `jax.value_and_grad` is called; the rebuilt program's data flow says that the gradients come from the scan
    and from nothing around it. Whether a backward pass was made by autodiff cannot be read off the program
    (a hand-written one can be the same equations, and the marks autodiff leaves are the child's to write)."""
    scans = find(trace.jaxpr, SCAN)
    if not scans:
        return CheckResult(False, "There is no `lax.scan` in the traced program, so there is no scan body in "
                           "which to call `jax.value_and_grad`.")
    source = trace.source
    through = [c for c in source.of(*REVERSE) if c.applied_to & set(LOOP_APIS)]
    inside = [c for c in source.inside(LOOP_APIS, *REVERSE) if c.own]
    reversed_ = [s for s in scans if s.params.get("reverse") is True]
    if through and not inside:
        return CheckResult(False, f"In your source, {through[0].shown()} differentiates a function that "
                           "contains the scan: autodiff then runs "
                           "the whole loop backwards after it. Call it inside the scan body, on one microbatch's "
                           "loss, and accumulate the results in the carry.",
                           [s.evidence("scan") for s in scans])
    if len(scans) > 1 and reversed_:
        return CheckResult(False, f"The traced program runs {len(scans)} scans, one of them in reverse"
                           f"{line_hint(reversed_[0])}: that is what `jax.grad` adds when it differentiates "
                           "*through* a scan. Call `jax.value_and_grad` inside the scan body instead.",
                           [s.evidence(f"scan{' (reverse)' if s in reversed_ else ''}") for s in scans])
    if not inside:
        other = source.of(*AUTODIFF)
        library = [c for c in source.inside(LOOP_APIS, *REVERSE) if not c.own]
        said = (f" Your source calls {', '.join(c.shown() for c in library[:3])} in the scan body, but on a "
                "library function (such as `jnp.tanh`), not on a loss function of yours." if library else
                f" Your source calls {', '.join(c.shown() for c in other[:3])}, but not inside the function "
                "passed to `lax.scan` (or `lax.fori_loop`)." if other else
                " Your source calls no `jax.value_and_grad`, `jax.grad` or `jax.vjp` at all.")
        return CheckResult(False, "The scan body has no backward pass made by reverse-mode autodiff "
                           f"(read from your source).{said} Gradients written out by hand, or forward mode "
                           "(`jax.jvp`, `jax.jacfwd`), do not count: call `jax.value_and_grad` (or `jax.grad`) on "
                           "the microbatch loss inside the step.", [s.evidence("scan") for s in scans])
    problems = []
    for scan in scans:
        carry = carries(trace, scan, outputs=["grads"], around_from=("x", "y"),
                        what="the scan (whose body calls autodiff)")
        decoy = _marked_backward_not_carrying(trace, scan)
        if carry.ok and decoy is not None:
            problems.append((scan, decoy + " Take the gradients that `jax.value_and_grad` returns inside the "
                             "step, and accumulate those."))
        elif carry.ok:
            return CheckResult(True, f"The scan body{line_hint(scan)} calls reverse-mode autodiff for its "
                               f"microbatch ({source.note(inside)}), and the gradients come from the scan "
                               "and from nothing around it.", [scan.evidence("scan")])
        problems.append((scan, carry.message() + " Take the gradients that `jax.value_and_grad` returns "
                         "inside the step, and accumulate those."))
    scan, message = problems[0]
    return CheckResult(False, message, [s.evidence("scan") for s, _ in problems])


def _marked_backward_not_carrying(trace: Trace, scan: EqnRef) -> str | None:
    """Against the submission only: where the marks JAX leaves on a backward pass (``transpose(...)`` in the
    name stacks, written in the learner's process) show one in the scan body, it must be what the gradients
    come from, or the autodiff call is a decoy beside gradients written by hand. Marks can only refuse here:
    a program without them (or with marks moved elsewhere) is decided by the facts above alone."""
    inner = body_eqns(scan)
    backward = [e for e in inner if is_backward_autodiff(relative_name_stack(e, scan))]
    if backward and any(e.primitive in MATMUL for e in inner) and not any(e.primitive in MATMUL for e in backward):
        return (f"Autodiff runs in the scan body{line_hint(scan)}, but not through the model's matrix products: "
                "the layers' backward pass is written by hand.")
    passes = [g for g in groups(trace, within=scan) if "transpose" in g.chain]
    if not passes:
        return None
    depth = min(g.scope.count("/") for g in passes)
    tried = [carries(trace, g, outputs=["grads"], around_from=("x", "y"), what="the backward pass in the scan body")
             for g in passes if g.scope.count("/") == depth]
    if any(c.ok for c in tried):
        return None
    return tried[0].message()


def _full_batch_uses(jaxpr: dict, full: set[str], n: int, found: list[dict]) -> None:
    """Record in ``found`` each equation of ``jaxpr`` that computes on ``full`` (var ids holding more than
    one microbatch of the data). Cutting such a value down to a 1/n share clears it; reshaping keeps it."""
    for eqn in jaxpr["eqns"]:
        if not any(var_id(a) in full for a in eqn["invars"]):
            continue
        outs = [var_id(o) for o in eqn["outvars"] if var_id(o)]
        prim = eqn["primitive"]
        if prim in INDEXING:
            source = prod(eqn["invars"][0]["shape"])
            if not all(prod(o["shape"]) * n <= source for o in eqn["outvars"]):
                full.update(outs)
        elif prim in SHAPE_ONLY:
            full.update(outs)
        elif eqn["subjaxprs"]:
            for sub in eqn["subjaxprs"].values():
                offset = len(eqn["invars"]) - len(sub["invars"])
                if not 0 <= offset <= 1:
                    found.append(eqn)
                    continue
                inner = {var_id(s) for a, s in zip(eqn["invars"][offset:], sub["invars"]) if var_id(a) in full}
                before = len(found)
                _full_batch_uses(sub, inner, n, found)
                if len(found) > before or any(var_id(o) in inner for o in sub["outvars"]):
                    full.update(outs)
        else:
            found.append(eqn)


def _reads_other_rows(trace: Trace, scans: list[EqnRef], n: int, rows: int) -> CheckResult | None:
    """A failure when a scan step reads rows of more than one microbatch, or not its own block of
    consecutive rows (a strided split), as the child measured it; None when each step reads one block."""
    measured = trace.step_reads.get("reads", {})
    if "error" in trace.step_reads:
        return CheckResult(False, "The grader could not measure which rows each scan step reads "
                           f"({trace.step_reads['error']}), so it cannot confirm that each step uses only its own "
                           "microbatch. Scan over `x.reshape(num_microbatches, -1, x.shape[1])` (and the same "
                           "for `y`).")
    for scan in scans:
        reads = measured.get(scan.path)
        if reads is None:
            continue
        per_step = [[b for b in range(n) if reads[b][j]] for j in range(n)]
        if all(len(blocks) == 1 for blocks in per_step) and len({b[0] for b in per_step}) == n:
            continue
        many = next((j for j, blocks in enumerate(per_step) if len(blocks) > 1), None)
        if many is not None:
            blocks = per_step[many]
            shown = ", ".join(f"{b * rows}..{(b + 1) * rows - 1}" for b in blocks[:4])
            return CheckResult(False, f"Scan step {many}{line_hint(scan)} reads rows from {len(blocks)} different "
                               f"microbatches (rows {shown}{', ...' if len(blocks) > 4 else ''}; S = {rows}). "
                               f"Microbatch j is rows jS..(j+1)S-1, consecutive rows: a strided split such as "
                               "`x.reshape(S, n, D).transpose(1, 0, 2)` or `x[j::n]` gives every step one row "
                               "of each block. The gradients come out the same, but that is not the split the "
                               "problem asks for; use `x.reshape(num_microbatches, -1, x.shape[1])`.",
                               [scan.evidence("step that reads several microbatches")])
        return CheckResult(False, f"Some scan steps{line_hint(scan)} read no rows of their microbatch at all: "
                           "each step must compute on its own S consecutive rows.",
                           [scan.evidence("steps without their microbatch")])
    return None


def microbatch_rows_only(trace: Trace) -> CheckResult:
    batch, n, rows = _sizes(trace)
    dots = find(trace.jaxpr, MATMUL)
    outside = [d for d in dots if not d.inside(SCAN)]
    if outside:
        return CheckResult(False, f"{len(outside)} matrix product{'s run' if len(outside) != 1 else ' runs'} outside the scan, e.g. "
                           f"`dot_general`{line_hint(outside[0])}. Every matrix product of the model belongs "
                           "in the scan step, on that step's microbatch.",
                           [d.evidence("matrix product outside the scan") for d in outside])
    scans = find(trace.jaxpr, SCAN)
    if n == 1 or not scans:
        return CheckResult(True, f"No matrix product runs outside the scan (with {n} microbatch(es) every "
                           "step sees its own rows).", [s.evidence("scan") for s in scans])
    strided = _reads_other_rows(trace, scans, n, rows)
    if strided:
        return strided
    data = {n_.split("|", 1)[1] for n_ in from_inputs(trace, "x", "y")}
    share = rows * (trace.args["x"][1] + trace.args["y"][1])  # all the data one microbatch of x and y holds
    for scan in scans:
        body = next(iter(scan.eqn["subjaxprs"].values()))
        num_consts = int(scan.params.get("num_consts", 0) or 0)
        num_carry = int(scan.params.get("num_carry", 0) or 0)
        outer, inner = scan.eqn["invars"], body["invars"]
        full = {var_id(s) for a, s in zip(outer[:num_consts], inner[:num_consts]) if var_id(a) in data}
        # A scanned input whose every slice holds more than one microbatch of data (e.g. copies of the batch).
        full |= {var_id(s) for a, s in zip(outer[num_consts + num_carry:], inner[num_consts + num_carry:])
                 if var_id(a) in data and prod(s["shape"]) > share}
        full.discard(None)
        found: list[dict] = []
        _full_batch_uses(body, full, n, found)
        if found:
            eqn = found[0]
            where = line_hint(EqnRef(eqn, ""))
            shapes = ", ".join(str(tuple(a["shape"])) for a in eqn["invars"])
            return CheckResult(False, f"In the scan step{line_hint(scan)}, `{eqn['primitive']}`{where} computes on "
                               f"data spanning more than one microbatch (operands {shapes}; B = {batch}, "
                               f"S = {rows}). Each step may use only the S rows of its own microbatch: scan over "
                               "the reshaped batch, or cut the step's rows with `lax.dynamic_slice` before "
                               "computing on them, rather than masking the whole batch.",
                               [scan.evidence("scan step that sees the whole batch"),
                                Evidence(path="", primitive=eqn["primitive"], jaxpr_line=eqn.get("line"),
                                         source_line=eqn.get("source_line"),
                                         note="computes on more than one microbatch")])
    return CheckResult(True, f"Every step computes only on its own S = {rows} row(s), and no matrix product "
                       "runs outside the scan.", [s.evidence("scan") for s in scans])


CHECKS = {
    "one-scan": one_scan,
    "grad-inside-scan": grad_inside_scan,
    "microbatch-rows-only": microbatch_rows_only,
}
