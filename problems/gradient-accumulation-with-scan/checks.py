"""Requirement checks for gradient-accumulation-with-scan, read off the traced program."""
from grader.jaxpr_tools import (MATMUL, SCAN, CheckResult, Trace, body_eqns, find, input_ids,
                                is_backward_autodiff, is_differentiated, is_forward_autodiff, iter_eqns,
                                line_hint, relative_name_stack, tainted_vars, var_id)


def _sizes(trace: Trace) -> tuple[int, int, int]:
    batch = trace.args["x"][0]
    n = trace.args["num_microbatches"]
    return batch, n, batch // n


def one_scan(trace: Trace) -> CheckResult:
    batch, n, _ = _sizes(trace)
    scans = find(trace.jaxpr, SCAN)
    if not scans:
        dots = find(trace.jaxpr, MATMUL)
        unrolled = f" It does hold {len(dots)} matrix products, as a Python loop unrolled into the trace would." \
            if len(dots) > 2 else ""
        return CheckResult(False, "The traced program contains no `lax.scan`." + unrolled +
                           " A Python `for` loop, or `vmap` over the microbatches, does not count: stack the "
                           "microbatches and walk them with one `jax.lax.scan`.",
                           [d.evidence("matrix product") for d in dots[:8]])
    if len(scans) > 1:
        differentiated = [s for s in scans if is_differentiated(s) or s.params.get("reverse") is True]
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
    return CheckResult(True, f"One `lax.scan` of length {n}{line_hint(scan)}.",
                       [scan.evidence(f"scan of length {n}")])


def grad_inside_scan(trace: Trace) -> CheckResult:
    scans = find(trace.jaxpr, SCAN)
    if not scans:
        return CheckResult(False, "There is no `lax.scan` in the traced program, so there is no scan body in "
                           "which to call `jax.value_and_grad`.")
    problems = []
    for scan in scans:
        if is_differentiated(scan):
            problems.append((scan, "The scan itself is differentiated: autodiff marked it "
                             f"`{scan.full_name_stack}`, which means `jax.grad`/`jax.value_and_grad` was applied "
                             "to a function containing the scan. Call it inside the scan body, on one "
                             "microbatch's loss, and accumulate the results in the carry."))
            continue
        inner = body_eqns(scan)
        backward = [e for e in inner if is_backward_autodiff(relative_name_stack(e, scan))]
        forward = [e for e in inner if is_forward_autodiff(relative_name_stack(e, scan))]
        if backward and forward:
            return CheckResult(True, f"The scan body{line_hint(scan)} runs autodiff's forward pass "
                               f"({len(forward)} equations) and backward pass ({len(backward)} equations) "
                               "for its microbatch.",
                               [scan.evidence("scan")] + [e.evidence("backward pass") for e in backward[:3]])
        problems.append((scan, f"The scan body{line_hint(scan)} has no backward pass made by autodiff (no "
                         "equation marked `transpose(jvp(...))`). Gradients written out by hand do not count: "
                         "call `jax.value_and_grad` (or `jax.grad`) on the microbatch loss inside the step."))
    scan, message = problems[0]
    return CheckResult(False, message, [s.evidence("scan") for s, _ in problems])


def microbatch_rows_only(trace: Trace) -> CheckResult:
    batch, n, rows = _sizes(trace)
    dots = find(trace.jaxpr, MATMUL)
    outside = [d for d in dots if not d.inside(SCAN)]
    if outside:
        return CheckResult(False, f"{len(outside)} matrix product(s) run outside the scan, e.g. "
                           f"`dot_general`{line_hint(outside[0])}. Every matrix product of the model belongs "
                           "in the scan step, on that step's microbatch.",
                           [d.evidence("matrix product outside the scan") for d in outside])
    data = tainted_vars(trace.jaxpr, input_ids(trace, "x", "y"))
    checked = []
    for dot in dots:
        for atom in dot.eqn["invars"]:
            if var_id(atom) not in data:
                continue
            shape = atom["shape"]
            checked.append(dot)
            # Rows lead: x, y and everything autodiff derives from them keep the batch on axis 0.
            if batch != rows and shape and shape[0] == batch and rows not in shape[1:]:
                return CheckResult(False, f"A matrix product in the scan step{line_hint(dot)} works on an "
                                   f"operand of shape {tuple(shape)} built from all B = {batch} rows of the "
                                   f"batch. Each step may use only the S = {rows} rows of its own microbatch: "
                                   "scan over the reshaped batch, or cut the step's rows with "
                                   "`lax.dynamic_slice`, rather than masking the full batch.",
                                   [dot.evidence(f"operand {tuple(shape)} spans the whole batch")])
    if not dots:
        return CheckResult(False, "The traced program contains no matrix product at all, so the model's "
                           "layers were not computed with JAX operations.")
    return CheckResult(True, f"Every matrix product on the data runs in the scan step on S = {rows} row(s) "
                       f"of its own microbatch ({len(set(d.path for d in checked))} checked).",
                       [d.evidence("microbatch matrix product") for d in {d.path: d for d in checked}.values()][:6])


CHECKS = {
    "one-scan": one_scan,
    "grad-inside-scan": grad_inside_scan,
    "microbatch-rows-only": microbatch_rows_only,
}
