"""Requirement checks for exponential-moving-average-with-scan, read off the traced program."""
from math import prod

from grader.jaxpr_tools import SCAN, CheckResult, EqnRef, Trace, find, iter_eqns, line_hint

CUMULATIVE = {"cumsum", "cumprod", "cumlogsumexp", "cummax", "cummin"}
BUFFER_WRITES = {"dynamic_update_slice", "scatter", "scatter-add", "scatter_add"}


def _sizes(trace: Trace) -> tuple[int, int]:
    steps, features = trace.args["x"]
    return steps, features


def _size(atom: dict) -> int:
    return prod(atom["shape"])


def scan_over_time(trace: Trace) -> CheckResult:
    steps, _ = _sizes(trace)
    scans = find(trace.jaxpr, SCAN)
    timed = [s for s in scans if s.params.get("length") == steps]
    if len(scans) == 1 and timed:
        return CheckResult(True, f"One `lax.scan` of length T = {steps}{line_hint(timed[0])} walks the sequence.",
                           [timed[0].evidence(f"scan of length {steps}")])
    if len(scans) > 1:
        return CheckResult(False, f"The traced program contains {len(scans)} scans. One `lax.scan` of length "
                           f"T = {steps} over the rows of `x` is all the recurrence needs: put the whole update "
                           "in its step function.", [s.evidence(f"scan of length {s.params.get('length')}")
                                                     for s in scans])
    if scans:
        scan = scans[0]
        return CheckResult(False, f"The scan{line_hint(scan)} runs {scan.params.get('length')} steps, but the "
                           f"sequence has T = {steps} rows. Scan over `x` itself, so that each step receives one "
                           "row `x[t]` of shape (D,).", [scan.evidence(f"length {scan.params.get('length')}")])
    square = [r for r in iter_eqns(trace.jaxpr) if steps >= 2
              and any(list(o["shape"]).count(steps) >= 2 for o in r.eqn["outvars"])]
    if square:
        return CheckResult(False, f"There is no `lax.scan`; instead the program builds a T-by-T array "
                           f"({steps} x {steps}) at `{square[0].primitive}`{line_hint(square[0])}, as the "
                           "closed form with a matrix of powers of beta does. That costs O(T^2) time and memory "
                           "and loses precision for long sequences; carry the average through "
                           "`jax.lax.scan(step, init, x)` instead.",
                           [r.evidence("T-by-T intermediate") for r in square[:6]])
    cumulative = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CUMULATIVE]
    if cumulative:
        return CheckResult(False, f"There is no `lax.scan`; the program uses `{cumulative[0].primitive}`"
                           f"{line_hint(cumulative[0])}, a cumulative formula that divides by powers of beta "
                           "and breaks down for long sequences. Carry the average through "
                           "`jax.lax.scan(step, init, x)` instead.", [r.evidence() for r in cumulative[:6]])
    eqns = list(iter_eqns(trace.jaxpr))
    grows = f" The program has {len(eqns)} equations for T = {steps} steps: it grows with the sequence, as a " \
            "Python loop (or `lax.associative_scan`) unrolled into the trace does." if len(eqns) >= steps >= 2 else ""
    return CheckResult(False, "The traced program contains no `lax.scan`." + grows + " Write the update for "
                       "one step, `step(average, row) -> (new_average, new_average)`, and run it with "
                       "`jax.lax.scan(step, init, x)`: the program then has the same size for any T.",
                       [r.evidence() for r in eqns if r.primitive in {"mul", "add"}][:8])


def _carry(scan: EqnRef) -> list[dict]:
    body = scan.eqn["subjaxprs"].get("jaxpr", {"invars": []})
    start = int(scan.params.get("num_consts", 0) or 0)
    return body["invars"][start:start + int(scan.params.get("num_carry", 0) or 0)]


def average_in_carry(trace: Trace) -> CheckResult:
    steps, features = _sizes(trace)
    history = steps * features
    if steps >= 2:
        for scan in find(trace.jaxpr, SCAN):
            big = [a for a in _carry(scan) if _size(a) >= history]
            if big:
                return CheckResult(False, f"The scan{line_hint(scan)} carries an array of shape "
                                   f"{tuple(big[0]['shape'])}, as large as the whole output, and rewrites it at "
                                   "every step. Carry only the running average, shape (D,), and return it as the "
                                   "step's output too: `scan` stacks the outputs into the (T, D) result itself.",
                                   [scan.evidence(f"carry of shape {tuple(big[0]['shape'])}")])
        writes = [r for r in iter_eqns(trace.jaxpr) if r.primitive in BUFFER_WRITES
                  and any(_size(o) >= history for o in r.eqn["outvars"])]
        if writes:
            return CheckResult(False, f"The program writes step results into a preallocated (T, D) buffer "
                               f"(`{writes[0].primitive}`{line_hint(writes[0])}, as `out.at[t].set(...)` does). "
                               "Return each step's average as the scan's per-step output instead; `scan` "
                               "stacks them for you.", [r.evidence("write into the output buffer")
                                                        for r in writes[:6]])
    scans = [s for s in find(trace.jaxpr, SCAN) if s.params.get("length") == steps]
    if scans:
        shapes = ", ".join(str(tuple(a["shape"])) for a in _carry(scans[0]))
        return CheckResult(True, f"The scan{line_hint(scans[0])} carries only {shapes} and stacks the "
                           "per-step averages as its output.", [scans[0].evidence(f"carry {shapes}")])
    return CheckResult(True, "No step writes into a preallocated (T, D) buffer.")


CHECKS = {
    "scan-over-time": scan_over_time,
    "average-in-carry": average_in_carry,
}
