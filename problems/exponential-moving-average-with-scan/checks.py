"""Requirement checks for exponential-moving-average-with-scan, read off the traced program.

A scan only counts where it computes the answer (``grader/toolkit/carries.py``): replacing its results must move
what the function returns, and `x` must reach the returned values through it alone. Inside it, the
*recurrence* must run in its carry: some float carry must depend on `x` and on its own previous value (a
scan that only passes the rows through, while the average is computed after it, has no such carry). The
per-step averages must be what the scan stacks: a stacked output that depends on that carry, read by
`averages`, and no `(T, D)` buffer in the carry or written row by row. No host callback (or primitive of the
submission's own) may compute what is returned: a scan whose step hands the update to Python carries an
average JAX never computed.
"""
from __future__ import annotations

from math import prod

from grader.toolkit import (SCAN, CheckResult, EqnRef, Node, Trace, carries, find, host_callback, iter_eqns, line_hint,
                            node)

CUMULATIVE = {"cumsum", "cumprod", "cumlogsumexp", "cummax", "cummin"}
BUFFER_WRITES = {"dynamic_update_slice", "scatter", "scatter-add", "scatter_add"}
LOOPS = {"scan", "while"}
MAX_CARRY_SLOTS = 16
"""Carry slots and stacked outputs examined per scan (a recurrence needs one; a program with hundreds is
not an EMA), so that the checks stay linear in the program's size."""
MAX_SCANS = 4
"""Scans of length T examined for `average-in-carry` (the right program has one)."""


def _sizes(trace: Trace) -> tuple[int, int]:
    steps, features = trace.args["x"]
    return steps, features


def _foreign(trace: Trace) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]


def _with_api(trace: Trace, marker: str) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if marker in r.api]


def _square(trace: Trace) -> list[EqnRef]:
    """Equations producing an array with two axes of length T (only decidable when T >= 2 and T != D)."""
    steps, features = _sizes(trace)
    if steps < 2 or steps == features:
        return []
    return [r for r in iter_eqns(trace.jaxpr) if any(list(o["shape"]).count(steps) >= 2 for o in r.eqn["outvars"])]


def _outside_loops(trace: Trace, reached: set[Node]) -> list[EqnRef]:
    """Equations outside every loop body whose results `x` reaches: a Python loop over the steps makes
    several per step, a scan makes none (its work is in its body)."""
    return [r for r in iter_eqns(trace.jaxpr) if not r.inside(LOOPS) and r.primitive not in LOOPS
            and any(n in reached for n in r.out_nodes)]


def _grows(trace: Trace, reached: set[Node]) -> list[EqnRef]:
    """Evidence of a Python loop over the steps: at least 3 equations per step outside any loop (one step's
    update is a slice, two products and a sum). Only decided for T >= 8, where 24 or more such equations
    cannot be a few lines of honest pre- or post-processing (which stay the same for every T)."""
    steps, _ = _sizes(trace)
    found = _outside_loops(trace, reached)
    return found if steps >= 8 and len(found) >= 3 * steps else []


class ScanShape:
    """The data flow of one scan: which carries hold a recurrence on `x`, which stacked outputs depend on
    it and feed `averages`, and which carries are (T, D) buffers that feed it."""

    def __init__(self, trace: Trace, scan: EqnRef, from_x: set[Node], to_averages: set[Node]) -> None:
        steps, features = _sizes(trace)
        self.source = trace.source
        body = scan.eqn["subjaxprs"].get("jaxpr", {"invars": [], "outvars": []})
        scope = f"{scan.path}/jaxpr/"
        nc, ncarry = int(scan.params.get("num_consts") or 0), int(scan.params.get("num_carry") or 0)
        body_in = [node(scope, a) for a in body["invars"]]
        body_out = [node(scope, a) for a in body["outvars"]]
        outs = scan.eqn["outvars"]
        self.scan = scan
        self.recurrent: list[int] = []
        """Carry slots holding a float value that depends on `x` and on its own previous value."""
        self.stacked: list[int] = []
        """Stacked outputs (index among the scan's results) that depend on a recurrent carry and reach
        `averages`."""
        self.buffers: list[dict] = []
        """Carried arrays as large as the whole output that reach `averages`."""
        reach_from: dict[int, set[Node]] = {}
        for k in range(min(ncarry, MAX_CARRY_SLOTS)):
            atom = body["invars"][nc + k] if nc + k < len(body["invars"]) else None
            if atom is None or not str(atom.get("dtype", "")).startswith(("float", "bfloat")):
                continue
            start = body_in[nc + k]
            if start not in from_x:
                continue
            reach_from[k] = trace.flow.reach([start])
            if k < len(body_out) and body_out[k] in reach_from[k]:
                self.recurrent.append(k)
        for j in range(ncarry, min(len(outs), ncarry + MAX_CARRY_SLOTS)):
            if j >= len(body_out) or node(scan.scope, outs[j]) not in to_averages:
                continue
            if any(body_out[j] in reach_from[k] for k in self.recurrent):
                self.stacked.append(j)
        for k in range(min(ncarry, len(outs))):
            atom = outs[k]
            size = prod(atom["shape"])
            if size >= steps * features and (steps >= 2 or len(atom["shape"]) >= 2):
                if node(scan.scope, atom) in to_averages:
                    self.buffers.append(atom)

    @property
    def fori(self) -> bool:
        """Whether the source writes the loop with `lax.fori_loop` (wording of messages only)."""
        return bool(self.source.of("fori_loop"))


def _no_scan_reason(trace: Trace, from_x: set[Node]) -> tuple[str, list]:
    """Why there is no scan, in the learner's terms: what the program does instead."""
    steps, _ = _sizes(trace)
    fake = [r for r in _foreign(trace) if r.primitive == "foreign:scan"] or _foreign(trace)
    if fake:
        return (f"The traced program has no `lax.scan`: `{fake[0].primitive[8:]}`{line_hint(fake[0])} is a "
                "primitive your code defined itself, not JAX's, so the grader cannot see what it does. ",
                [r.evidence("not a JAX primitive") for r in fake[:3]])
    assoc = _with_api(trace, "lax.associative_scan")
    if assoc:
        return (f"The program uses `jax.lax.associative_scan`{line_hint(assoc[0])}: it combines the steps in "
                "about log2(T) rounds of pairwise merges, all steps at once, so there is no loop that carries "
                "the average from one step to the next, and the traced program grows with T. It is the "
                "parallel alternative to the recurrence; this problem asks for the sequential one, one "
                "`lax.scan` whose carry is the running average. ",
                [assoc[0].evidence("associative_scan")])
    square = _square(trace)
    if square:
        return (f"There is no `lax.scan`; instead the program builds a T-by-T array ({steps} x {steps}) at "
                f"`{square[0].primitive}`{line_hint(square[0])}, as the closed form with a matrix of powers of "
                "beta does. That costs O(T^2) time and memory. ", [r.evidence("T-by-T intermediate")
                                                                   for r in square[:6]])
    cumulative = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CUMULATIVE]
    if cumulative:
        return (f"There is no `lax.scan`; the program uses `{cumulative[0].primitive}`"
                f"{line_hint(cumulative[0])}, a cumulative formula (sums of x_s / beta^s rescaled by beta^t "
                "overflow or divide by zero for small beta and long sequences). ",
                [r.evidence() for r in cumulative[:6]])
    loops = [r for r in find(trace.jaxpr, {"while"}) if any(n in from_x for n in r.out_nodes)]
    if loops:
        return (f"There is no `lax.scan`: `lax.while_loop`{line_hint(loops[0])} walks the steps instead (a "
                "`fori_loop` whose bounds are traced becomes one); it has no per-step outputs and its length "
                "is not known to JAX. ", [r.evidence("while loop") for r in loops[:3]])
    grows = _outside_loops(trace, from_x)
    if steps >= 2 and len(grows) >= steps:
        return (f"The traced program contains no `lax.scan`; it has {len(grows)} equations on `x` for T = "
                f"{steps} steps, so it grows with the sequence, as a Python loop unrolled into the trace does "
                f"(e.g. `{grows[0].primitive}`{line_hint(grows[0])}). ", [r.evidence() for r in grows[:6]])
    return "The traced program contains no `lax.scan`. ", []


def scan_over_time(trace: Trace) -> CheckResult:
    steps, _ = _sizes(trace)
    from_x = trace.flow.reach(trace.inputs("x"))
    scans = find(trace.jaxpr, SCAN)
    if not scans:
        why, evidence = _no_scan_reason(trace, from_x)
        return CheckResult(False, why + "Write the update for one step, `step(average, row) -> (new_average, "
                           "new_average)`, and run it with `jax.lax.scan(step, init, x)`: the program then has "
                           "the same size for any T.", evidence)
    if len(scans) > 1:
        return CheckResult(False, f"The traced program contains {len(scans)} scans. One `lax.scan` of length "
                           f"T = {steps} over the rows of `x` is all the recurrence needs: put the whole update "
                           "in its step function, and take `final` from its carry.",
                           [s.evidence(f"scan of length {s.params.get('length')}") for s in scans])
    scan = scans[0]
    length = scan.params.get("length")
    if length != steps:
        return CheckResult(False, f"The scan{line_hint(scan)} runs {length} steps, but the sequence has T = "
                           f"{steps} rows. Scan over `x` itself, so that each step receives one row `x[t]` of "
                           "shape (D,).", [scan.evidence(f"length {length}")])
    square = _square(trace)
    if square:
        return CheckResult(False, f"The scan{line_hint(scan)} walks the sequence, but the program also builds a "
                           f"T-by-T array ({steps} x {steps}) at `{square[0].primitive}`{line_hint(square[0])}, "
                           "a matrix of weights over pairs of steps. Drop it: the scan's carry already holds "
                           "everything the next step needs.", [r.evidence("T-by-T intermediate") for r in square[:6]])
    carry = carries(trace, scan, around_from=("x",), what="the scan")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the scan's stacked averages and its final carry.",
                           [scan.evidence("scan that does not carry the answer")] + carry.around_evidence)
    grows = _grows(trace, from_x)
    if grows:
        return CheckResult(False, f"Besides the scan{line_hint(scan)}, {len(grows)} equations outside it compute "
                           f"on `x` for T = {steps} steps (e.g. `{grows[0].primitive}`{line_hint(grows[0])}): a "
                           "Python loop over the steps, unrolled into the trace, so the program grows with T. "
                           "Do all the per-step work inside the scan's step function.",
                           [scan.evidence("scan")] + [r.evidence("outside the scan, on x") for r in grows[:5]])
    to_averages = trace.flow.sources_of([trace.flow.outputs[k] for k in trace.output_index("averages")])
    shape = ScanShape(trace, scan, from_x, to_averages)
    if not shape.recurrent:
        return CheckResult(False, f"The scan{line_hint(scan)} carries nothing that depends on `x` from one step "
                           "to the next: it only passes the rows through, and the recurrence m_t = beta m_(t-1) "
                           "+ (1 - beta) x_t runs somewhere else. Carry the running average: "
                           "`step(average, row)` must return the new average as its carry.",
                           [scan.evidence("scan without a recurrence")])
    loops = [r for r in find(trace.jaxpr, {"while"}) if not r.inside(SCAN) and any(n in from_x for n in r.out_nodes)]
    if loops:
        return CheckResult(False, f"Besides the scan, a `while` loop{line_hint(loops[0])} also walks data from "
                           "`x`. One `lax.scan` over the rows is all the recurrence needs.",
                           [r.evidence("second loop") for r in loops[:3]])
    hosted = host_callback(trace, "", "the averages are computed by Python, outside the traced program",
                           "Write the update in the step function with JAX's own operations: `decay * average + "
                           "(1 - decay) * row`.")
    if not hosted.passed:
        return hosted
    how = " (a `lax.fori_loop` with fixed bounds, which JAX runs as a scan)" if shape.fori else ""
    return CheckResult(True, f"One `lax.scan` of length T = {steps}{line_hint(scan)}{how} walks the sequence, "
                       "carries the running average, and computes what the function returns." + carry.note,
                       [scan.evidence(f"scan of length {steps}")])


def average_in_carry(trace: Trace) -> CheckResult:
    steps, features = _sizes(trace)
    from_x = trace.flow.reach(trace.inputs("x"))
    to_averages = trace.flow.sources_of([trace.flow.outputs[k] for k in trace.output_index("averages")])
    writes = [r for r in iter_eqns(trace.jaxpr) if r.primitive in BUFFER_WRITES and not r.inside(SCAN)
              and any(prod(o["shape"]) >= steps * features for o in r.eqn["outvars"])
              and any(n in to_averages for n in r.out_nodes)]
    scans = [s for s in find(trace.jaxpr, SCAN) if s.params.get("length") == steps]
    if not scans:
        why, evidence = _no_scan_reason(trace, from_x)
        if writes:
            why += (f"The averages are written into a preallocated (T, D) buffer (`{writes[0].primitive}`"
                    f"{line_hint(writes[0])}, as `out.at[t].set(...)` does). ")
            evidence = evidence + [r.evidence("write into the output buffer") for r in writes[:3]]
        return CheckResult(False, why + "With no scan, nothing carries the running average from step to step or "
                           "stacks the per-step averages. Use `jax.lax.scan(step, init, x)` with the average as "
                           "the carry and as each step's output.", evidence)
    shapes = [ScanShape(trace, s, from_x, to_averages) for s in scans[:MAX_SCANS]]
    buffered = next((s for s in shapes if s.buffers), None)
    if buffered:
        atom = buffered.buffers[0]
        fori = (" `lax.fori_loop` has no per-step outputs, which is why its results must go into a buffer: "
                "use `lax.scan`, whose step returns `(carry, output)`." if buffered.fori else "")
        return CheckResult(False, f"The scan{line_hint(buffered.scan)} carries an array of shape "
                           f"{tuple(atom['shape'])}, as large as the whole output, and `averages` is read from "
                           "it: the results are written into a preallocated buffer, rewritten at every step."
                           f"{fori} Carry just the running average (its D values) and return it as the step's "
                           "output too: `scan` stacks the outputs into the (T, D) result itself.",
                           [buffered.scan.evidence(f"carry of shape {tuple(atom['shape'])}")])
    if writes:
        return CheckResult(False, f"The averages are written into a preallocated (T, D) buffer "
                           f"(`{writes[0].primitive}`{line_hint(writes[0])}, as `out.at[t].set(...)` does). "
                           "Return each step's average as the scan's per-step output instead; `scan` stacks "
                           "them for you.", [r.evidence("write into the output buffer") for r in writes[:6]])
    stacking = [s for s in shapes if s.stacked]
    if not stacking:
        scan = shapes[0].scan
        if not any(s.recurrent for s in shapes):
            why = ("carries nothing that depends on `x` from one step to the next, so it cannot stack running "
                   "averages: its per-step outputs are something else (the rows passed through, or a counter)")
        else:
            why = ("carries a running value, but none of its per-step outputs that `averages` is built from "
                   "depends on it")
        return CheckResult(False, f"The scan{line_hint(scan)} {why}. Return the new average from the step as "
                           "both the carry and the output: `return average, average`.",
                           [scan.evidence("scan that does not stack the averages")])
    tried = [(s, carries(trace, s.scan, outputs=["averages"], what="the scan")) for s in stacking]
    good = next(((s, c) for s, c in tried if not c.still and not c.unknown), None)
    if good is None:
        scan, carry = tried[0]
        return CheckResult(False, carry.message() + " The returned `averages` must be the per-step averages the "
                           "scan stacks, not values computed beside it.",
                           [scan.scan.evidence("scan whose stacked averages are not returned")])
    scan, note = good[0], good[1].note
    carried = ", ".join(str(tuple(scan.scan.eqn["subjaxprs"]["jaxpr"]["invars"][int(scan.scan.params.get("num_consts") or 0) + k]["shape"]))
                        for k in scan.recurrent)
    return CheckResult(True, f"The scan{line_hint(scan.scan)} carries the running average (shape {carried}) and stacks "
                       "the per-step averages as its output, and `averages` is what it stacks." + note,
                       [scan.scan.evidence(f"carry {carried}")])


CHECKS = {
    "scan-over-time": scan_over_time,
    "average-in-carry": average_in_carry,
}
