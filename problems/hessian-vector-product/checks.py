"""Requirement checks for hessian-vector-product, read off the traced program and the submitted source.

Which transformations the submission asked for (`jax.jvp` of a function that calls `jax.grad`) is read from
its source (``Trace.source``, parsed on the trusted side, never run). The marks below are written in the
learner's process, so they are used only to refuse, never to accept.

Autodiff writes its transformations into every equation's name stack, outermost first: ``jvp(...)`` for
forward mode, ``transpose(jvp(...))`` for the backward pass of reverse mode. Forward-over-reverse (`jax.jvp`
or `jax.linearize` of a gradient) leaves ``jvp(transpose(jvp(...)))`` on the gradient's backward pass, and
``vmap(...)`` may sit anywhere among them (a loss built with `jax.vmap` over examples), so only the order of
``jvp`` and ``transpose`` matters (``grader.toolkit.chain``).

That pass must carry the answer (``grader/toolkit/carries.py``): replacing its results must move `hvp`, and `w`, `x`
and `v` must reach `hvp` only through it, so a product written out by hand (or a matrix product with a
Hessian formed first) beside a decorative `jax.jvp` fails. Which entry point built a D-by-D intermediate
(`jax.jacfwd`, `jax.jacrev`, `jax.hessian`, a `vmap` over basis vectors) is read from the equations' `api`
markers, so the message names what was really used.
"""
from __future__ import annotations

from grader.toolkit import (REVERSE, Carry, growth, CheckResult, EqnRef, Node, SourceFacts, Trace, carries, chain, groups,
                            iter_eqns, line_hint)

WORK = ("dot_general", "mul", "div", "add", "sub", "exp", "log", "log1p", "logistic", "reduce_sum", "neg",
        "integer_pow", "pow", "select_n", "custom_jvp_call")
"""Primitives worth pointing at on a path around the forward-over-reverse pass (reshapes are not)."""


def _dims(trace: Trace) -> tuple[int, int]:
    n, d = trace.args["x"]
    return n, d


def _chain(ref: EqnRef) -> list[str]:
    return chain(ref.full_name_stack)


def _forward_over_reverse(ref: EqnRef) -> bool:
    """Made by forward mode (outermost) differentiating a backward pass."""
    c = _chain(ref)
    return c[:1] == ["jvp"] and "transpose" in c


def _reverse_over_autodiff(ref: EqnRef) -> bool:
    """Made by reverse mode (outermost) differentiating something already differentiated."""
    c = _chain(ref)
    return c[:1] == ["transpose"] and c.count("jvp") >= 2


def _square(trace: Trace) -> list[tuple[EqnRef, tuple]]:
    """Equations with a result that has two axes of length D (only decidable when D >= 2 and N != D)."""
    n, d = _dims(trace)
    if d < 2 or n == d:
        return []
    found = []
    for r in iter_eqns(trace.jaxpr):
        shape = next((tuple(o["shape"]) for o in r.eqn["outvars"] if list(o["shape"]).count(d) >= 2), None)
        if shape is not None:
            found.append((r, shape))
    return found


def _who_built(refs: list[EqnRef]) -> str:
    """What built the D-by-D arrays, from the entry points running when they were made."""
    api = {m for r in refs for m in r.api}
    if "jacfwd" in api and "jacrev" in api:
        return ("`jax.hessian`, which is `jax.jacfwd` of `jax.jacrev`: reverse mode for the gradient, then all D "
                "basis vectors pushed forward through it at once under `vmap`, one Hessian column each")
    if "jacfwd" in api:
        return ("`jax.jacfwd`, which pushes all D basis vectors forward through the function at once (a `vmap` "
                "of `jvp`), one Hessian column each")
    if "jacrev" in api:
        return ("`jax.jacrev`, which pulls all D basis vectors back through the function at once (a `vmap` of "
                "`vjp`), one Hessian row each")
    if "vmap" in api:
        return "a `vmap` over the D basis vectors, one Hessian column or row each"
    if all(r.primitive in ("iota", "eq", "convert_element_type", "broadcast_in_dim") for r in refs):
        return "your code (the D-by-D identity, D basis vectors)"
    return "your code directly (an outer product, or X^T diag(s) X)"


def no_dense_hessian(trace: Trace) -> CheckResult:
    n, d = _dims(trace)
    square = _square(trace)
    if square:
        ref, shape = next(((r, s) for r, s in square if r.primitive != "iota"), square[0])
        return CheckResult(False, f"`{ref.primitive}`{line_hint(ref)} produces an array of shape {shape}, with "
                           f"two axes of length D = {d}: a Hessian-sized intermediate ({d * d} entries), built by "
                           f"{_who_built([r for r, _ in square])}. A Hessian-vector product never needs it: push "
                           "the single direction `v` through the gradient with `jax.jvp(grad_fn, (w,), (v,))`, and "
                           "every intermediate stays the size of `w` or of the batch.",
                           [r.evidence(f"shape {s}") for r, s in square[:6]])
    if d >= 2 and n == d:
        return CheckResult(True, f"Here N = D = {d}, so a D-by-D array cannot be told from an (N, D) one; the "
                           "other input shapes decide this requirement.")
    return CheckResult(True, f"No intermediate has two axes of length D = {d}: the Hessian is never formed.")


def _around(trace: Trace, blocked: list[Node], sources: list[Node]) -> tuple[list[str], list[EqnRef]]:
    """Outputs named `hvp` that ``sources`` reach without passing through ``blocked``, and equations on
    such paths (the most telling first)."""
    targets = [trace.flow.outputs[k] for k in trace.output_index("hvp")]
    reached = trace.flow.reach(sources, blocked)
    around = [trace.output_names[k] for k in trace.output_index("hvp") if trace.flow.outputs[k] in reached]
    if not around:
        return [], []
    on_path = reached & trace.flow.sources_of(targets, blocked)
    refs = [r for r in iter_eqns(trace.jaxpr) if any(o in on_path for o in r.out_nodes)]
    heavy = [r for r in refs if r.primitive in WORK]
    heavy.sort(key=lambda r: (WORK.index(r.primitive), r.eqn.get("line") or 0))
    return around, heavy or refs


def _no_pass_message(trace: Trace) -> tuple[str, list]:
    """What the program does instead, when no forward-mode pass differentiates a backward pass."""
    eqns = list(iter_eqns(trace.jaxpr))
    to_hvp = trace.flow.sources_of([trace.flow.outputs[k] for k in trace.output_index("hvp")])
    second = [r for r in eqns if _reverse_over_autodiff(r) and any(n in to_hvp for n in r.out_nodes)]
    if second:
        r = second[0]
        kind = "reverse-over-reverse" if _chain(r).count("transpose") >= 2 else "reverse-over-forward"
        return (f"The product comes from reverse mode applied last{line_hint(r)}: autodiff marked it "
                f"`{'>'.join(_chain(r))}`, outermost first. This is {kind}, a `jax.grad` of a function that "
                "already differentiates. It gives the right numbers, but stores a second set of intermediates "
                "for its backward pass. ", [e.evidence("second-order reverse pass") for e in second[:6]])
    fake = [r for r in eqns if r.primitive.startswith("foreign:")]
    if fake:
        return (f"`{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code defined itself, not "
                "JAX's: whatever it is named, the grader cannot see autodiff in it. ",
                [r.evidence("not a JAX primitive") for r in fake[:3]])
    backward = [r for r in eqns if "transpose" in _chain(r)]
    if backward:
        return ("The program has a gradient's backward pass, but no forward-mode pass differentiates it: the "
                "product with `v` was not taken by autodiff (finite differences, or a formula written by "
                "hand). ", [r.evidence("first-order backward pass") for r in backward[:4]])
    return ("The traced program contains no autodiff at all (no equation marked `jvp(...)` or "
            "`transpose(...)` by JAX), so the product was written by hand. ", [])


def _source_says(source: SourceFacts) -> str:
    """What the source does instead of `jax.jvp` of a gradient (read from the source: a sentence)."""
    over_forward = [c for c in source.of(*REVERSE) if c.applied_to & {"jvp", "jacfwd", "linearize"}]
    over_reverse = [c for c in source.of(*REVERSE) if c.applied_to & REVERSE]
    dense = source.of("hessian", "jacfwd", "jacrev")
    forward = source.of("jvp", "linearize")
    if over_reverse:
        return (f"Your source applies reverse mode to a gradient ({source.note(over_reverse)}): this is "
                "reverse-over-reverse, which gives the right numbers but stores a second set of intermediates. ")
    if over_forward:
        return (f"Your source applies reverse mode to a forward-mode derivative ({source.note(over_forward)}): "
                "this is reverse-over-forward. ")
    if dense:
        return f"Your source builds derivatives a whole Jacobian at a time ({source.note(dense)}). "
    if forward:
        return (f"Your source calls forward mode ({source.note(forward)}), but not on a function that computes "
                "a gradient with `jax.grad` (or `jax.value_and_grad`, `jax.vjp`). ")
    return "Your source calls no autodiff for the product (read from your source): it is written by hand. "


def forward_over_reverse(trace: Trace) -> CheckResult:
    """Forward-over-reverse is read from the source (``Trace.source``: `jax.jvp` or `jax.linearize` applied to
    a function that calls `jax.grad`); the marks JAX leaves on the program's equations (``jvp(transpose(...))``,
    written in the learner's process) are used only to refuse: where they show the forward-over-reverse pass,
    `hvp` must come from it alone, as the probes and the data flow of the rebuilt program say."""
    n, d = _dims(trace)
    advice = ("Pass `v` as the tangent of `jax.jvp` applied to the gradient function: "
              "`jax.jvp(lambda w: jax.grad(loss)(w, x, y), (w,), (v,))`, and return its tangent output.")
    source = trace.source
    asked = [c for c in source.of("jvp", "linearize") if c.applied_to & REVERSE]
    if not asked:
        return CheckResult(False, _source_says(source) + advice)
    note = source.note(asked)
    passes = [r for r in iter_eqns(trace.jaxpr) if _forward_over_reverse(r)]
    if not passes:
        eqns = list(iter_eqns(trace.jaxpr))
        to_hvp = trace.flow.sources_of([trace.flow.outputs[k] for k in trace.output_index("hvp")])
        refuse = any(r.primitive.startswith("foreign:") for r in eqns) or any(
            _reverse_over_autodiff(r) and any(o in to_hvp for o in r.out_nodes) for r in eqns) or any(
            "transpose" in _chain(r) for r in eqns)
        if refuse:
            why, evidence = _no_pass_message(trace)
            return CheckResult(False, why + advice, evidence)
        return CheckResult(True, f"`hvp` is the tangent output of forward mode over the gradient ({note}).")
    blocked = [o for r in passes for o in r.out_nodes]
    around, on_path = _around(trace, blocked, trace.inputs("w", "x", "v"))
    if around:
        reverse = [r for r in on_path if _reverse_over_autodiff(r)]
        built = next((r for r in on_path if any(list(a["shape"]).count(d) >= 2 for a in r.eqn["invars"])), None)
        where = f" (for instance `{on_path[0].primitive}`{line_hint(on_path[0])})" if on_path else ""
        if reverse:
            why, evidence = _no_pass_message(trace)
            return CheckResult(False, why + advice, evidence)
        if built is not None and d >= 2 and n != d:
            msg = (f"`hvp` is a matrix product with an array of D x D entries{line_hint(built)}: the Hessian is "
                   "formed first (its columns may come from forward-over-reverse) and then multiplied by `v`, so "
                   "the product itself is not taken by autodiff. ")
        else:
            names = [f"`{a}`" for a in ("w", "x", "v") if _around(trace, blocked, trace.inputs(a))[0]]
            who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            msg = (f"`hvp` is also computed by a path that goes around the forward-over-reverse pass{where}: "
                   f"{who} reach{'es' if len(names) == 1 else ''} it without going through `jax.jvp` of the "
                   "gradient, as a product written out by hand next to it does. The answer must come from the jvp "
                   "of the gradient alone. ")
        return CheckResult(False, msg + advice, [r.evidence("computes hvp around the jvp of the gradient")
                                                 for r in on_path[:4]] + [passes[0].evidence("forward-over-reverse")])
    tried: list[Carry] = [carries(trace, g, outputs=["hvp"], what="the forward-over-reverse pass")
                          for g in groups(trace) if g.chain.split(">")[:1] == ["jvp"] and "transpose" in g.chain]
    measured = [c for c in tried if c.measured and not c.unknown]
    if measured and all(c.still for c in measured):
        carry = measured[0]
        return CheckResult(False, carry.message() + " " + advice, [passes[0].evidence("forward-over-reverse pass")])
    unknown = [c for c in tried if c.unknown]
    if unknown and not measured:
        return CheckResult(False, unknown[0].message() + " " + advice, [passes[0].evidence("forward-over-reverse")])
    return CheckResult(True, f"The product comes from forward mode differentiating the gradient's backward pass"
                       f"{line_hint(passes[-1])} ({note}): autodiff marked it `{'>'.join(_chain(passes[-1]))}`, outermost "
                       "first, and nothing computes it around that pass.",
                       [r.evidence("jvp of the backward pass") for r in passes[-4:]])


def cost_of_a_gradient(trace: Trace) -> CheckResult:
    """Decided by the program: a Hessian-vector product costs a few gradients, so no loop runs once per
    parameter (a `scan` of D steps: the Hessian a row or a column at a time, D gradients' worth of work, even
    if no D-by-D array is kept), and the traced program does not grow with D (a Python loop over the D basis
    vectors unrolls into it). Compared across the traced shapes; a trace where D equals N cannot tell a loop
    over the parameters from one over the examples, and the other shapes decide."""
    n, d = _dims(trace)
    per_parameter = [r for r in iter_eqns(trace.jaxpr) if r.primitive == "scan"
                     and r.eqn["params"].get("length") == d and d != n and d > 1]
    if per_parameter:
        loop = per_parameter[0]
        return CheckResult(False, f"A `scan` of D = {d} steps{line_hint(loop)} runs once per parameter: the Hessian "
                           "a row or a column at a time, D gradients' worth of work even though no D-by-D array is "
                           "kept. A Hessian-vector product costs a few gradients: push the single direction `v` "
                           "through the gradient with `jax.jvp(grad_fn, (w,), (v,))`.",
                           [loop.evidence(f"a loop of D = {d} steps")])
    grown = growth(trace, lambda t: t.args["x"][1] if t.args.get("x") and t.args["x"][1] >= 2 else None)
    if grown is not None:
        small, few, large, many = grown
        return CheckResult(False, f"The traced program grows with D: {few} equations for D = {small}, {many} for "
                           f"D = {large}. A Python loop over the D basis vectors unrolls into it, one gradient's "
                           "worth of work per parameter. Push the single direction `v` through the gradient with "
                           "`jax.jvp(grad_fn, (w,), (v,))`.")
    return CheckResult(True, "No loop runs once per parameter and the program does not grow with D: the product "
                       "costs a few gradients, whatever D is.")


CHECKS = {
    "cost-of-a-gradient": cost_of_a_gradient,
    "no-dense-hessian": no_dense_hessian,
    "forward-over-reverse": forward_over_reverse,
}
