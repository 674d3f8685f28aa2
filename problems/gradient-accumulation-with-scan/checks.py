"""Requirement checks for gradient-accumulation-with-scan, read off the traced program and what it computes.

Each required structure must also carry the answer (``grader/toolkit/carries.py``): the scan's results must be what
the function returns, computed from `x` and `y` by no other path. What each scan step computes is measured on
the trusted side (``experiments.py``: the body's values at every step, on fresh inputs), never read from the
source or from the labels on the program's equations. Which rows each step reads is measured too: the verifier
moves one microbatch's rows at a time and sees which steps change (``Trace.step_reads``).
"""
from math import prod

from grader.toolkit import (MATMUL, SCAN, CheckResult, EqnRef, Evidence, Trace, carries, find, from_inputs,
                            iter_eqns, line_hint, node, var_id)

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


LEAVES = ("w1", "b1", "w2", "b2")


def _reaches(trace: Trace, scan: EqnRef, match: dict, output: str) -> bool:
    """Whether the scan body's result ``match`` (``{"path", "k"}``, relative to the body) flows into the
    outputs named ``output``."""
    ref = trace.eqn_at.get(f"{scan.path}/jaxpr/{match['path']}")
    if ref is None or match["k"] >= len(ref.eqn["outvars"]):
        return False
    start = node(ref.scope, ref.eqn["outvars"][match["k"]])
    reached = trace.flow.outputs_reached([start])
    return any(k in reached for k in trace.output_index(output))


def _each_share_once(order: list[int], steps: int) -> bool:
    """The steps of both draws (``experiments.py``) each hold one share of their own draw's batch, every share
    at one step."""
    return (len(order) == 2 * steps and sorted(order[:steps]) == list(range(steps))
            and sorted(order[steps:]) == list(range(steps, 2 * steps)))


def _holds(trace: Trace, scan: EqnRef, found: dict, key: str, output: str | None) -> dict | None:
    """A body result that holds, at every step, a different share's ``key`` (its loss, or its gradient for one
    parameter), each share once, and flows into ``output`` (when given)."""
    for match in found.get(key, []):
        if _each_share_once(match["order"], found["steps"]) and (
                output is None or _reaches(trace, scan, match, output)):
            return match
    return None


def grad_inside_scan(trace: Trace) -> CheckResult:
    """Decided by what the scan's body computes: the verifier evaluates the rebuilt program on fresh parameters
    and data (``experiments.py``) and looks at every value the body holds at every step. The row holds when one
    scan's body holds, at each step, one microbatch's loss and the gradient of that loss for every parameter
    (each microbatch at one step), and those values flow into ``loss`` and ``grads``. How the gradient is
    computed is the learner's: autodiff or a backward pass written out by hand, if it is the gradient."""
    scans = find(trace.jaxpr, SCAN)
    if not scans:
        return CheckResult(False, "There is no `lax.scan` in the traced program, so no scan step computes a "
                           "microbatch's forward and backward pass.")
    measured = trace.experiments.get("per_step")
    if measured is None:
        if any(t.experiments.get("per_step") for t in trace.siblings):
            return CheckResult(True, "Measured on the other input shapes.", [s.evidence("scan") for s in scans])
        return CheckResult(False, "The grader could not evaluate the scan's steps on this program, so it cannot "
                           "confirm that each step computes its microbatch's loss and gradient.")
    if "error" in measured:
        return CheckResult(False, "The grader could not evaluate the scan's steps on fresh inputs "
                           f"({measured['error']}), so it cannot confirm that each step computes its microbatch's "
                           "loss and gradient.", [s.evidence("scan") for s in scans])
    n = int(measured.get("microbatches", 0))
    loops = measured.get("loops", {})
    seen = []
    for scan in scans:
        found = loops.get(scan.path)
        if found is None:
            continue
        for split in ("", "strided:"):  # consecutive shares, or a strided split (microbatch-rows-only's)
            loss = _holds(trace, scan, found, split + "loss", None)
            grads = {leaf: _holds(trace, scan, found, split + leaf, f"grads.{leaf}") for leaf in LEAVES}
            missing = [leaf for leaf, m in grads.items() if m is None]
            if loss is not None and not missing:
                break
        seen.append((scan, loss, missing, found))
        moved = carries(trace, scan, outputs=["grads"], around_from=("x", "y"))
        if loss is not None and not missing and moved.ok:
            share = "one microbatch's" if found["steps"] == n else f"its share of {found['steps']} rows'"
            return CheckResult(True, f"Each step of the scan{line_hint(scan)} computes {share} loss and the "
                               "gradient of that loss for every parameter, each share at its own step (the grader "
                               "evaluated the steps on parameters and data your code never saw), and those "
                               "gradients are what `grads` is computed from.", [scan.evidence("scan")])
        if loss is not None and not missing:
            seen[-1] = (scan, loss, missing, found, moved)
    reversed_ = [s for s in scans if s.params.get("reverse") is True]
    if len(scans) > 1 and reversed_:
        return CheckResult(False, f"The traced program runs {len(scans)} scans, one of them in reverse"
                           f"{line_hint(reversed_[0])}: the first computes the microbatches' forward passes and "
                           "the reversed one their gradients, from values the first stacked step by step. That is "
                           "what `jax.grad` makes when it differentiates *through* a scan. Compute each "
                           "microbatch's loss and gradient in the same step, for example with "
                           "`jax.value_and_grad` inside the scan body.",
                           [s.evidence(f"scan{' (reverse)' if s in reversed_ else ''}") for s in scans])
    if not seen:
        return CheckResult(False, "No scan's steps split the batch into equal shares of consecutive rows, so no "
                           "step can hold one microbatch's forward and backward pass.",
                           [s.evidence("scan") for s in scans])
    decorative = next((entry for entry in seen if len(entry) == 5), None)
    if decorative is not None:
        scan, moved = decorative[0], decorative[4]
        return CheckResult(False, f"Each step of the scan{line_hint(scan)} computes its microbatch's loss and "
                           f"gradient, but {moved.message()[0].lower() + moved.message()[1:]} Return the "
                           "gradients the steps compute, accumulated in the carry.",
                           [scan.evidence("scan")] + moved.around_evidence)
    scan, loss, missing, found = seen[0]
    anywhere = [leaf for leaf in LEAVES if found.get(leaf)]
    if not anywhere:
        what = ("holds each microbatch's loss, but no step computes a gradient of it" if loss is not None else
                "computes neither a microbatch's loss nor its gradient")
        return CheckResult(False, f"The scan's body{line_hint(scan)} {what} (the grader evaluated every step on "
                           "fresh inputs and looked at every value the body computes). Differentiating a function "
                           "that contains the scan runs the backward pass after the loop instead. Compute each "
                           "microbatch's gradient inside the step, for example with `jax.value_and_grad` on that "
                           "microbatch's loss, and accumulate it in the carry.", [scan.evidence("scan")])
    if loss is None:
        return CheckResult(False, f"The scan's steps{line_hint(scan)} compute gradients, but no step holds its "
                           "microbatch's loss flowing into `loss`: each step must run the forward pass of its "
                           "microbatch as well as the backward pass.", [scan.evidence("scan")])
    return CheckResult(False, f"The scan's steps{line_hint(scan)} do not compute the gradient of their "
                       f"microbatch's loss for {', '.join(f'`{m}`' for m in missing)} (or it does not flow into "
                       "`grads`). Each step must compute the whole gradient of its own microbatch's loss.",
                       [scan.evidence("scan")])


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
