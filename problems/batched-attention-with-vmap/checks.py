"""Requirement checks for batched-attention-with-vmap, read off the traced program.

`vmap` leaves no equation of its own: it turns every operation into its batched form. What it does leave is
size: a batched softmax exponentiates all B x T x S scores in one equation, while a loop over the examples
(Python, `lax.map`, `scan`) exponentiates T x S scores at a time.
"""
from math import prod

from grader.jaxpr_tools import (LOOPS, CheckResult, EqnRef, Trace, input_ids, iter_eqns, line_hint,
                                tainted_vars, var_id)


def _dims(trace: Trace) -> tuple[int, int, int]:
    b, t, _ = trace.args["q"]
    s = trace.args["k"][1]
    return b, t, s


def _score_exps(trace: Trace) -> list[EqnRef]:
    """The `exp` equations applied to values computed from the queries."""
    from_q = tainted_vars(trace.jaxpr, input_ids(trace, "q"))
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive == "exp"
            and any(var_id(a) in from_q for a in r.eqn["invars"])]


def batched_not_looped(trace: Trace) -> CheckResult:
    b, t, s = _dims(trace)
    exps = _score_exps(trace)
    looped = [r for r in exps if r.inside(LOOPS)]
    if looped:
        loop = next(a for a in reversed(looped[0].ancestors) if a.primitive in LOOPS)
        return CheckResult(False, f"The softmax runs inside a `{loop.primitive}` loop{line_hint(loop)} that handles one "
                           f"example per step (here {loop.params.get('length', 'several')} step(s) for B = {b}), as "
                           "`lax.map` or a `fori_loop` over the batch does. The examples are independent: "
                           "`jax.vmap(attend)(q, k, v)` computes them all at once.",
                           [loop.evidence("loop over the examples"), looped[0].evidence("exp inside the loop")])
    small = [r for r in exps if b >= 2 and prod(r.eqn["outvars"][0]["shape"]) < b * t * s]
    if small:
        shape = tuple(small[0].eqn["outvars"][0]["shape"])
        return CheckResult(False, f"The program exponentiates the scores {len(exps)} times, in pieces of shape "
                           f"{shape}{line_hint(small[0])}, rather than all B x T x S = {b} x {t} x {s} at once: a "
                           "Python loop over the examples unrolls one copy of attention per example into the "
                           "program, which grows with the batch. Write attention for one example and map it "
                           "with `jax.vmap(attend)(q, k, v)`.",
                           [r.evidence(f"exp of shape {tuple(r.eqn['outvars'][0]['shape'])}") for r in small[:6]])
    if not exps:
        return CheckResult(True, "No exponential of the scores to check; the program has no loop over the "
                           "examples.")
    return CheckResult(True, f"The softmax exponentiates all {b} x {t} x {s} scores in one batched equation"
                       f"{line_hint(exps[0])}.", [r.evidence("batched exp") for r in exps[:3]])


def stable_softmax(trace: Trace) -> CheckResult:
    maxima = {var_id(o) for r in iter_eqns(trace.jaxpr) if r.primitive in {"reduce_max", "argmax"}
              for o in r.eqn["outvars"] if var_id(o)}
    shifted = tainted_vars(trace.jaxpr, maxima)
    exps = _score_exps(trace)
    raw = [r for r in exps if not any(var_id(a) in shifted for a in r.eqn["invars"])]
    if raw:
        return CheckResult(False, f"`exp`{line_hint(raw[0])} is applied to scores from which no row maximum "
                           "was subtracted (clipping them or subtracting their mean does not bound the largest). A score above about 88 overflows float32 to `inf`, and the "
                           "softmax becomes `inf / inf = nan`. Subtract `s.max(axis=-1, keepdims=True)` before "
                           "`jnp.exp`, or use `jax.nn.softmax(s, axis=-1)`.",
                           [r.evidence("exp of unshifted scores") for r in raw[:4]])
    if not exps:
        return CheckResult(False, "No `exp` of the scores was found in the traced program, so the softmax was "
                           "not computed with `jnp.exp` on the scaled scores. Compute it as "
                           "`exp(s - max) / sum(exp(s - max))`, or with `jax.nn.softmax`.")
    return CheckResult(True, f"Every `exp` of the scores{line_hint(exps[0])} comes after a maximum is "
                       "subtracted.", [r.evidence("exp of shifted scores") for r in exps[:3]])


CHECKS = {
    "batched-not-looped": batched_not_looped,
    "stable-softmax": stable_softmax,
}
