"""Requirement checks for speculative-decoding-acceptance, read off the traced programs.

- **uniforms-from-key**: a `random_bits` equation (JAX's own: what every `jax.random` sampler traces to)
  must read the `key` argument, and an elementwise comparison with n results must read both those bits and
  the probabilities; that comparison must carry `num_accepted` (probed: flipping its results moves it; data
  flow: the key reaches `num_accepted` only through it).
- **first-rejection-array-ops**: no `scan` or `while` (what `lax.scan`, `fori_loop` and `while_loop` trace
  to), no host callback and no primitive of the submission's own in the program, and the program does not
  grow with n: it is compared with the submission's programs for the other n (``Trace.siblings``), and a
  Python loop over the positions writes its body out once per position.
"""
from __future__ import annotations

from math import prod

from grader.toolkit import HOST_CALLBACKS, CheckResult, EqnRef, Trace, carries, find, iter_eqns, line_hint, size

RANDOM_BITS = {"random_bits"}
COMPARISONS = {"lt", "le", "gt", "ge"}
LOOPS = {"scan", "while"}
CALLBACKS = HOST_CALLBACKS


def _n(trace: Trace) -> int:
    return int(trace.args["draft_tokens"][0])


def _foreign(trace: Trace) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")
            and trace.flow.outputs_reached(r.out_nodes)]


def uniforms_from_key(trace: Trace) -> CheckResult:
    n = _n(trace)
    flow = trace.flow
    from_key = flow.reach(trace.inputs("key"))
    bits = [r for r in find(trace.jaxpr, RANDOM_BITS) if any(x in from_key for x in r.in_nodes)]
    if not bits:
        fake = _foreign(trace)
        hosts = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CALLBACKS]
        seen = (f" `{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code defined itself, not JAX's."
                if fake else f" A host callback (`{hosts[0].primitive}`{line_hint(hosts[0])}) runs outside the "
                "traced program, where the grader cannot see what it draws." if hosts else "")
        return CheckResult(False, "No `jax.random` sampler draws from `key` in the traced program (nothing traces "
                           "to `random_bits` of it)." + seen + " Draw the uniforms with "
                           "`jax.random.uniform(key, (n,))`.", [r.evidence("") for r in (fake or hosts)[:2]])
    from_bits = flow.reach([x for b in bits for x in b.out_nodes])
    from_probs = flow.reach(trace.inputs("draft_probs", "target_probs"))
    tests = [r for r in find(trace.jaxpr, COMPARISONS) if any(x in from_bits for x in r.in_nodes)
             and any(x in from_probs for x in r.in_nodes)]
    whole = [r for r in tests if prod(r.eqn["outvars"][0]["shape"]) == n]
    if not whole:
        if tests:
            t = tests[0]
            shape = tuple(t.eqn["outvars"][0]["shape"])
            return CheckResult(False, f"The uniforms are compared with the ratios{line_hint(t)}, but one comparison "
                               f"gives {prod(shape)} result(s) (shape {shape}) where there are n = {n} positions: "
                               "test every position at once, `u < jnp.minimum(1.0, p / q)` on arrays of shape (n,).",
                               [r.evidence("comparison") for r in tests[:3]])
        return CheckResult(False, "No comparison reads both the uniforms drawn from `key` and the probabilities, so "
                           "nothing in the program is the acceptance test. Compare them elementwise: "
                           "`accepted = u < jnp.minimum(1.0, p / q)`.", [b.evidence("random bits") for b in bits[:2]])
    tried = [carries(trace, t, outputs=["num_accepted"], around_from=("key",), what="the acceptance comparison")
             for t in whole]
    ok = next((t for t, c in zip(whole, tried) if c.ok), None)
    note = next((c.note for c in tried if c.ok), "")
    if ok is None:
        return CheckResult(False, tried[0].message() + " Compute `num_accepted` from the elementwise test "
                           "`u < jnp.minimum(1.0, p / q)`.",
                           [t.evidence("comparison that does not decide num_accepted") for t in whole[:2]]
                           + tried[0].around_evidence)
    return CheckResult(True, f"The uniforms come from `key`{line_hint(bits[0])}, one comparison tests all {n} "
                       f"positions{line_hint(ok)}, and `num_accepted` is computed from it.{note}",
                       [bits[0].evidence("uniforms from key"), ok.evidence("acceptance test")])


def first_rejection_array_ops(trace: Trace) -> CheckResult:
    n = _n(trace)
    loops = find(trace.jaxpr, LOOPS)
    if loops:
        r = loops[0]
        kind = ("a `lax.scan` or `fori_loop`" if r.primitive == "scan" else "a `while_loop` (or a `fori_loop` whose "
                "bounds are traced)")
        return CheckResult(False, f"The program runs {kind}{line_hint(r)}: a loop that walks the positions one "
                           "after another. Find the first rejection on all positions at once, e.g. "
                           "`jnp.sum(jnp.cumprod(accepted))`.", [x.evidence("loop") for x in loops[:3]])
    hosts = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CALLBACKS]
    if hosts:
        h = hosts[0]
        return CheckResult(False, f"A host callback (`{h.primitive}`{line_hint(h)}) runs Python outside the "
                           "traced program, where any loop may hide. Use array operations such as `jnp.cumprod` "
                           "and `jnp.argmax` inside it.", [x.evidence("host callback") for x in hosts[:3]])
    fake = _foreign(trace)
    if fake:
        return CheckResult(False, f"`{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code defined "
                           "itself; the grader cannot see what it runs. Use JAX's own array operations.",
                           [x.evidence("not a JAX primitive") for x in fake[:3]])
    mine = size(trace.jaxpr)
    smaller = [(_n(o), size(o.jaxpr)) for o in trace.siblings if o is not trace and 2 <= _n(o) < n]
    grown = [(m, s) for m, s in smaller if s < mine]
    if n >= 2 and grown:
        m, s = min(grown)
        return CheckResult(False, f"The traced program has {mine} equations for n = {n} but {s} for n = {m}: it "
                           "grows with the number of positions, so something is written out once per position "
                           "(a Python `for` loop or a list comprehension over them). Work on whole arrays of shape "
                           "(n,) instead: `jnp.cumprod`, `jnp.argmax`, indexing with `jnp.arange(n)`.")
    sizes = {(_n(o), size(o.jaxpr)) for o in trace.siblings if _n(o) >= 2} | ({(n, mine)} if n >= 2 else set())
    ns = sorted({m for m, _ in sizes})
    if len(ns) < 2:
        note = ""
    elif len({s for _, s in sizes}) == 1:
        note = f"; the program has the same {mine} equations for n = {', '.join(map(str, ns))}"
    else:
        note = f"; the program is no larger for larger n (n = {', '.join(map(str, ns))})"
    return CheckResult(True, f"No loop and no host callback: the first rejection is found with array operations on "
                       f"all {n} positions at once{note}.")


CHECKS = {
    "uniforms-from-key": uniforms_from_key,
    "first-rejection-array-ops": first_rejection_array_ops,
}
