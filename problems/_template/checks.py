"""Requirement checks: one function per requirement id, each reading one traced program.

Start every check from ``grader.toolkit.carries``: finding the required structure is not enough, it must
compute the answer. ``carries(trace, ref, outputs=[...], around_from=(...))`` establishes both halves:
the outputs move when the structure's results are replaced (the child's counterfactual probes: not fooled by
``* 0``, ``jnp.where(False, ...)``, ``stop_gradient`` or adding and subtracting the same term), and the
named inputs reach those outputs only through it (exact data flow: an answer computed beside it is a path
around it). ``find`` already ignores primitives that are not JAX's own (they arrive as ``foreign:<name>``).
Then check placement where the sentence asks for it (which data, which axis) with ``trace.flow``.
"""
from grader.toolkit import CheckResult, Trace, carries, find, line_hint


def uses_reduce(trace: Trace) -> CheckResult:
    reductions = [r for r in find(trace.jaxpr, {"reduce_sum"}) if r.eqn["invars"][0]["shape"] == trace.args["x"]]
    rows = trace.args["x"][0]
    if len(reductions) != 1:
        return CheckResult(False, f"Expected one `reduce_sum` over the whole of `x`, found {len(reductions)} for "
                           f"N = {rows} rows: sum all rows at once with `jnp.sum(x, axis=1)`.",
                           [r.evidence("reduction") for r in reductions])
    reduction = reductions[0]
    carry = carries(trace, reduction, around_from=("x",), what="the reduction")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return what `jnp.sum(x, axis=1)` computes.",
                           [reduction.evidence("reduction that does not carry the answer")] + carry.around_evidence)
    return CheckResult(True, f"One reduction{line_hint(reduction)}, and the row sums come from it.",
                       [reduction.evidence("reduction")])


CHECKS = {"uses-reduce": uses_reduce}
