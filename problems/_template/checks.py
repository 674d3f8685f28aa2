"""Requirement checks: one function per requirement id, each reading one traced program."""
from grader.jaxpr_tools import CheckResult, Trace, find, line_hint


def uses_reduce(trace: Trace) -> CheckResult:
    reductions = find(trace.jaxpr, {"reduce_sum"})
    rows = trace.args["x"][0]
    if len(reductions) != 1:
        return CheckResult(False, f"Expected one `reduce_sum`, found {len(reductions)} for N = {rows} rows: "
                           "sum all rows at once with `jnp.sum(x, axis=1)`.",
                           [r.evidence("reduction") for r in reductions])
    return CheckResult(True, f"One reduction{line_hint(reductions[0])}.", [reductions[0].evidence("reduction")])


CHECKS = {"uses-reduce": uses_reduce}
