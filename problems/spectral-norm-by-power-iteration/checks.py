"""Requirement checks for spectral-norm-by-power-iteration, read off the traced program.

Each required structure must carry the answer (``grader/toolkit/carries.py``):

- one-loop: a JAX `scan` (what `lax.fori_loop` with Python-int bounds and `lax.scan` trace to) of exactly
  `n_iters` steps, outside every backward pass, whose body computes its carried vectors from matrix products
  with `w`; the starting `u` reaches the outputs only through such loops (flax's style runs the loop again
  inside the differentiated function: two loops, each a full estimate), every output depends on them, and
  `sigma` or `u` moves when the grader replaces a loop's results (the probes; a converged u is a stationary
  point of sigma, so sigma alone may not move, and a 1 x 1 weight's unit vectors are +-1, so there the probes
  are not read). A Python loop leaves no loop at all, a loop that passes the vector through leaves no product
  in its body, a loop beside the real computation is decorative or bypassed, and an exact sigma does not
  depend on the loop.
- stop-gradient: `grad` is not computed by going back through the iteration's steps: no loop that runs in
  reverse (what `jax.vjp` makes of the loop when it differentiates through it) and no loop that reads what
  another loop stacked step by step (a backward pass through the iterations written out by hand) reaches
  `grad`. The effect of `stop_gradient` (or of running the iteration outside the differentiated function) is
  that nothing goes back through the loop. The hidden cases catch the same mistake by its numbers, on
  estimates that have not converged. How `grad` is computed is the learner's.
"""
from __future__ import annotations

import dataclasses
import math

from grader.toolkit import (LOOPS, MATMUL, Carry, CheckResult, EqnRef, Group, Trace, body_eqns, carries, find,
                            iter_eqns, line_hint, paths_around)

OUTPUTS = ["w_sn", "sigma", "u", "grad"]


def _backward(ref: EqnRef) -> bool:
    """A loop that runs in reverse (what autodiff makes of a loop it differentiates through): a fact of the
    program, unlike the marks on its equations."""
    return ref.params.get("reverse") is True


def _foreign(trace: Trace) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]


def _steps(loop: EqnRef) -> int | None:
    return loop.params.get("length") if loop.primitive == "scan" else None


def _computes_vectors(trace: Trace, loop: EqnRef) -> list[EqnRef]:
    """Matrix products in the loop's body that read `w` and whose results reach the loop's carried
    results (the next vectors)."""
    from_w = trace.flow.reach(trace.inputs("w"))
    num_carry = int(loop.params.get("num_carry", len(loop.out_nodes)) or 0)
    carried = set(loop.out_nodes[:num_carry]) - {None}
    out = []
    for d in body_eqns(loop):
        if d.primitive in MATMUL and any(n in from_w for n in d.in_nodes) and \
                carried & trace.flow.reach([n for n in d.out_nodes if n is not None]):
            out.append(d)
    return out


def one_loop(trace: Trace) -> CheckResult:
    n = trace.args["n_iters"]
    loops = [r for r in find(trace.jaxpr, LOOPS) if not _backward(r)]
    if not loops:
        fake = _foreign(trace)
        if fake:
            return CheckResult(False, f"The traced program has no JAX loop; `{fake[0].primitive[8:]}`"
                               f"{line_hint(fake[0])} is a primitive your code defined itself, not JAX's. Use "
                               "`jax.lax.fori_loop(0, n_iters, step, carry)`.",
                               [r.evidence("not a JAX primitive") for r in fake[:3]])
        dots = find(trace.jaxpr, MATMUL)
        seen = (f" Its {len(dots)} matrix products suggest a Python `for` loop, which is unrolled into the trace: "
                "one copy of the step per iteration, so the program grows with `n_iters`." if len(dots) >= 2 * n
                else "")
        return CheckResult(False, "The traced program contains no `lax.fori_loop` or `lax.scan`." + seen +
                           " Run the iterations with `jax.lax.fori_loop(0, n_iters, step, (u, v))`.")
    sized = [r for r in loops if _steps(r) == n]
    if not sized:
        loop = loops[0]
        if loop.primitive == "while":
            why = ("is a `while` loop, whose number of steps is decided while it runs (a `lax.while_loop`, or a "
                   "`fori_loop` whose bounds are traced values): write `jax.lax.fori_loop(0, n_iters, ...)` "
                   "with the Python int `n_iters`, which JAX turns into a scan of fixed length")
        else:
            why = f"runs {_steps(loop)} steps, but `n_iters` is {n}: each step is one full power iteration"
        return CheckResult(False, f"The loop{line_hint(loop)} {why}.",
                           [r.evidence(f"{r.primitive}, {_steps(r) or 'unknown'} steps") for r in loops[:3]])
    working = [r for r in sized if _computes_vectors(trace, r)]
    if not working:
        loop = sized[0]
        return CheckResult(False, f"The loop{line_hint(loop)} has {n} steps, but its body computes no vector from "
                           "a matrix product with `w`: it passes its carry through (or works on something else), "
                           "so the iterations run elsewhere. Compute `v = normalize(w @ u)` and "
                           "`u = normalize(w.T @ v)` inside the step.", [loop.evidence("loop without products")])
    loop = working[0]
    names, around = paths_around(trace, working, trace.inputs("u"), OUTPUTS)
    if names:
        shown = ", ".join(f"`{x}`" for x in names)
        where = f" (for instance `{around[0].primitive}`{_at(around[0])})" if around else ""
        return CheckResult(False, f"{shown} {'is' if len(names) == 1 else 'are'} computed from the starting `u` by "
                           f"a path that goes around the loop{line_hint(loop)}{where}: the iterations (or part of "
                           "them) run outside it, or the starting vector is returned as it came. Compute every "
                           "output from the vectors the loop returns.", [loop.evidence("the loop")] + around)
    reached = set(trace.flow.outputs_reached([x for r in working for x in r.out_nodes if x is not None]))
    missing = [o for o in OUTPUTS if not any(k in reached for k in trace.output_index(o))]
    if missing:
        shown = ", ".join(f"`{x}`" for x in missing)
        return CheckResult(False, f"{shown} {'does' if len(missing) == 1 else 'do'} not depend on the vectors the "
                           f"loop{line_hint(loop)} returns: the estimate is computed another way (an exact norm, "
                           "an SVD) or not at all. Compute sigma = v^T W u from the loop's last u and v.",
                           [loop.evidence("the loop")])
    probed = [_finite(trace, r, carries(trace, r, outputs=["sigma", "u"], what="the loop")) for r in working]
    if tuple(trace.args["w"]) == (1, 1):
        # Every unit vector of size 1 is +1 or -1: a program that normalises after the loop gives the same
        # sigma and u whatever the loop returns, so the probes say nothing here (the data flow still counts).
        probed = [dataclasses.replace(c, still=[]) for c in probed]
    if all(c.unknown for c in probed):
        return CheckResult(False, probed[0].message(), [loop.evidence("the loop")])
    if not any(not c.unknown and not c.decorative for c in probed):
        # A converged u is also a stationary point of sigma = v^T W u, so replacing the loop's vectors by
        # nearly parallel ones moves sigma only to second order: the loop is decorative when neither moves.
        c = next(c for c in probed if not c.unknown)
        return CheckResult(False, c.message() + " Compute sigma and the rest from the vectors the loop returns.",
                           [loop.evidence("does not move the outputs")])
    products = _computes_vectors(trace, loop)
    return CheckResult(True, f"A loop of {n} steps{line_hint(loop)} computes the vectors with {len(products)} "
                       f"matrix product{'s' if len(products) != 1 else ''} of `w` in its body, and every output "
                       "comes from what it returns.",
                       [loop.evidence(f"loop of {n} steps")]
                       + [p.evidence("product in the body") for p in products[:2]])


def _at(e) -> str:
    bits = [b for b in (f"your line {e.source_line}" if e.source_line else "",
                        f"jaxpr line {e.jaxpr_line}" if e.jaxpr_line else "") if b]
    return f" at {', '.join(bits)}" if bits else ""


def _finite(trace: Trace, target: EqnRef | Group, carry: Carry) -> Carry:
    """``carry`` without the outputs whose probed values were all zero or not finite (the probes' scale
    ignores NaN and inf): an output that is NaN there (a wrong answer that overflows) stays NaN whatever is
    replaced, and an all-zero one (a 1 x 1 weight's grad) may rightly not move, which says nothing either
    way about the structure."""
    key = f"eqn:{target.path}" if isinstance(target, EqnRef) else target.key
    for t in (trace.probes or {}).get("targets", []):
        if t.get("key") == key and "scale" in t:
            bad = {trace.output_names[k] for k, s in enumerate(t["scale"])
                   if k < len(trace.output_names) and not (isinstance(s, (int, float)) and math.isfinite(s) and s > 0)}
            carry.still = [o for o in carry.still if o not in bad]
    return carry


def _stacked(loop: EqnRef) -> list:
    """The nodes of what a scan stacks step by step (its per-step outputs)."""
    if loop.primitive != "scan":
        return []
    num_carry = int(loop.params.get("num_carry", 0) or 0)
    return [n for n in loop.out_nodes[num_carry:] if n is not None]


def stop_gradient(trace: Trace) -> CheckResult:
    """Decided by the rebuilt program: `grad` must not be computed by going back through the power iteration's
    steps. No loop that runs in reverse (what transposing the iteration makes) and no loop that reads what
    another loop stacked step by step (its residuals, read back by a backward pass written out by hand) may
    reach `grad`. The hidden cases check the numbers: `grad` with the vectors held constant. How `grad` is
    computed (`jax.vjp`, `jax.grad`, a formula written out) is the learner's."""
    feeding = trace.flow.sources_of([trace.flow.outputs[k] for k in trace.output_index("grad")])
    loops = [r for r in find(trace.jaxpr, LOOPS) if any(n in feeding for n in r.out_nodes)]
    reversed_loops = [r for r in loops if r.params.get("reverse") is True]
    if reversed_loops:
        loop = reversed_loops[0]
        return CheckResult(False, f"`grad` goes back through the power iteration: a `{loop.primitive}` runs in "
                           f"reverse{line_hint(loop)} and computes it, which is what autodiff makes of the loop "
                           "when it differentiates through it. Pass the vectors through `jax.lax.stop_gradient` "
                           "before computing sigma (as flax's and haiku's `SpectralNorm` do), so the gradient "
                           "treats them as constants.",
                           [r.evidence("the loop, differentiated") for r in reversed_loops[:3]])
    for loop in loops:
        for other in find(trace.jaxpr, LOOPS):
            if other is loop:
                continue
            residuals = trace.flow.reach(_stacked(other))
            if any(n in residuals for n in loop.in_nodes):
                return CheckResult(False, f"`grad` goes back through the power iteration: the loop"
                                   f"{line_hint(loop)} reads what the loop{line_hint(other)} stacked at every "
                                   "step and computes `grad` from it, a backward pass through the iterations. "
                                   "Hold the vectors constant (`jax.lax.stop_gradient`) and differentiate only "
                                   "W / sigma.", [loop.evidence("reads the iteration's steps"),
                                                  other.evidence("the iteration")])
    return CheckResult(True, "`grad` does not go back through the power iteration: no loop runs in reverse into "
                       "it, and none reads what the iteration stacked step by step, so its vectors are held "
                       "constant.", [r.evidence("loop") for r in loops[:2]])


CHECKS = {
    "one-loop": one_loop,
    "stop-gradient": stop_gradient,
}
