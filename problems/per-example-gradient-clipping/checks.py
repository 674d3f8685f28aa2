"""Requirement checks for per-example-gradient-clipping, read off the traced program and what it computes.

**batched-per-example-grads**: the program must compute all B per-example gradients at once, and `grads` and
`norms` from them. It is measured, not read from labels (``experiments.py``): the verifier evaluates the
rebuilt program on fresh parameters and data and looks, among the values it computes outside any loop, for an
array that holds every example's gradient of a parameter (an axis of length B beside the parameter's own
axes), for every parameter. Then, from the program's data flow: those arrays flow into `grads` and `norms`,
`x` and `y` reach `grads` and `norms` by no path around them (a second computation of the gradients, a loop
beside them), and nothing on the way comes from a host callback or a primitive of the submission's own
(``grader.toolkit.host_callback``). How the gradients are computed is free: `jax.vmap` of `jax.grad`, `vjp`
under `vmap`, a batched backward pass written by hand. A loop over the examples computes them one step at a
time (no array outside the loop holds them), and a Python loop computes B separate gradients.

**no-batch-jacobian**: no computation on the answer's path may hold an axis of basis vectors (made by an
``iota``, as ``jax.jacrev``/``jax.jacfwd``/``jnp.eye`` make them) of length >= 2 beside the batch axis:
``jacrev`` of the B losses pulls B basis vectors back through the whole batch, ``jacfwd`` pushes one tangent
per parameter through every example. ``vmap(jacrev(loss))`` of one example's scalar loss has a basis of one
vector and is a gradient.
"""
from __future__ import annotations

from grader.toolkit import (Axes, CheckResult, growth, EqnRef, Trace, axes_of, from_inputs, host_callback, iter_eqns,
                            line_hint, node, paths_around)

BATCH = {"x": 0, "y": 0}
LOOP_API = {"lax.map": "`lax.map`", "lax.fori_loop": "`lax.fori_loop`", "lax.scan": "`lax.scan`",
            "lax.while_loop": "`lax.while_loop`"}


def loop_name(api: list[str]) -> str:
    """The loop the learner wrote, from a loop equation's API markers: the innermost loop call, except that
    `lax.map` and `lax.fori_loop` are written with a `scan` or `while_loop` inside."""
    calls = [a for a in api if a in LOOP_API]
    if not calls:
        return ""
    if len(calls) > 1 and calls[-1] in ("lax.scan", "lax.while_loop") and calls[-2] in ("lax.map", "lax.fori_loop"):
        return LOOP_API[calls[-2]]
    return LOOP_API[calls[-1]]
HINT = "Write the loss of one example and map its gradient: `jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))`."


LEAVES = ("w1", "b1", "w2", "b2")


MOVES = {"reshape", "transpose", "squeeze", "expand_dims", "copy", "copy_p", "convert_element_type",
         "broadcast_in_dim"}
"""Equations that only move or relabel numbers: a result they give was computed by what they read."""
ASSEMBLED = {"concatenate", "stack", "dynamic_update_slice", "scatter", "scatter-add", "scatter_add", "pad", "scan",
             "while"}
"""Equations that assemble an array from pieces computed apart (a Python loop's stack, a loop's stacked
outputs): an array they give was not computed at once."""


def _held(trace: Trace, match: dict) -> EqnRef | None:
    """The equation the verifier found holding every example's gradient, when that array was computed at once:
    looking back through reshapes and transposes, made by neither a join of pieces nor a loop. A `jit`-like
    sub-program's result is not counted itself (the equation inside it that computes the array is)."""
    ref = trace.eqn_at.get(match["path"])
    at = ref
    for _ in range(64):
        if at is None or at.primitive in ASSEMBLED or at.eqn["subjaxprs"]:
            return None
        invars = at.eqn["invars"]
        if at.primitive not in MOVES or not invars or "id" not in invars[0]:
            return ref
        made = trace.flow.made_by.get(node(at.scope, invars[0]))
        if made is None:
            return ref
        at = trace.eqn_at.get(made[0])
    return ref


def _reaches(trace: Trace, ref: EqnRef, k: int, output: str) -> bool:
    start = node(ref.scope, ref.eqn["outvars"][k])
    reached = trace.flow.outputs_reached([start])
    return any(i in reached for i in trace.output_index(output))


def batched_per_example_grads(trace: Trace) -> CheckResult:
    """Decided by what the program computes (``experiments.py``): evaluated on fresh inputs, it must hold every
    example's gradient of every parameter in one array computed outside any loop, that array must be what
    `grads` and `norms` are computed from (the data flow: `x` and `y` reach them by no path around it), and
    nothing on the way may come from the host. How the gradients are computed is the learner's."""
    b = trace.args["x"][0]
    measured = trace.experiments.get("per_example")
    if measured is None:
        if any(t.experiments.get("per_example") for t in trace.siblings):
            return CheckResult(True, "Measured on the other input shapes.")
        return CheckResult(False, "The grader could not evaluate this program on fresh inputs, so it cannot "
                           "confirm that it computes the per-example gradients at once. " + HINT)
    if "error" in measured:
        return CheckResult(False, f"The grader could not evaluate this program on fresh inputs ({measured['error']}), "
                           "so it cannot confirm that it computes the per-example gradients at once. " + HINT)
    hosted = host_callback(trace, "", "part of the clipping (or of what `grads` and `norms` come from) is "
                           "computed by Python on the host, outside the traced program",
                           "Compute the norms, the clipping factors `max_norm / jnp.maximum(norms, max_norm)` and "
                           "the mean with JAX's own operations.")
    if not hosted.passed:
        return hosted
    held: dict[str, list[tuple[EqnRef, int]]] = {}
    pieced = []  # the per-example gradients as an array assembled from pieces (a stack, a loop's outputs)
    for leaf in LEAVES:
        for match in measured.get("leaves", {}).get(leaf, []):
            ref = trace.eqn_at.get(match["path"])
            if ref is not None and match["k"] < len(ref.eqn["outvars"]) and _held(trace, match) is None:
                pieced.append(node(ref.scope, ref.eqn["outvars"][match["k"]]))
    from_pieces = trace.flow.reach(pieced)
    for leaf in LEAVES:
        for match in measured.get("leaves", {}).get(leaf, []):
            ref = _held(trace, match)
            if ref is None or match["k"] >= len(ref.eqn["outvars"]):
                continue
            if node(ref.scope, ref.eqn["outvars"][match["k"]]) in from_pieces:
                continue  # computed from pieces that already hold them (a stack plus zero, say): not at once
            if _reaches(trace, ref, match["k"], f"grads.{leaf}"):
                held.setdefault(leaf, []).append((ref, match["k"]))
    missing = [leaf for leaf in LEAVES if leaf not in held]
    if missing:
        return _not_batched(trace, missing, b)
    grown = _grows_with_the_batch(trace)
    if grown:
        return grown
    for leaf in LEAVES:  # one computation: every array found holding them is computed from one of the others
        nodes = [node(r.scope, r.eqn["outvars"][k]) for r, k in held[leaf]]
        roots = [n for n in nodes if not any(n in trace.flow.reach([m]) for m in nodes if m != n)]
        if len(roots) > 1:
            first, second = (r for r, k in held[leaf] if node(r.scope, r.eqn["outvars"][k]) in roots[:2])
            return CheckResult(False, f"The program computes every example's gradient at once, but twice: "
                               f"{line_hint(first).strip() or 'one computation'} and "
                               f"{line_hint(second).strip() or 'another'} each compute the per-example gradients "
                               f"of `{leaf}` on their own. Compute them with one batched backward pass and use its "
                               "result for both the norms and the clipped mean. " + HINT,
                               [first.evidence("per-example gradients"), second.evidence("computed again")])
    unnormed = [leaf for leaf in LEAVES if not any(_reaches(trace, r, k, "norms") for r, k in held[leaf])]
    if unnormed:
        return CheckResult(False, "The program computes every example's gradient at once, but `norms` is not "
                           f"computed from the per-example gradients of {', '.join(f'`{x}`' for x in unnormed)}. "
                           "Each example's norm is the norm of its whole gradient, every leaf. " + HINT,
                           [r.evidence("per-example gradients") for r, _ in held[unnormed[0]][:1]])
    blocked = [r for pairs in held.values() for r, _ in pairs]
    starts = [node(r.scope, r.eqn["outvars"][k]) for pairs in held.values() for r, k in pairs]
    downstream = trace.flow.reach(starts)
    to_norms = trace.flow.sources_of([trace.flow.outputs[i] for i in trace.output_index("norms")])
    looped = [r for r in iter_eqns(trace.jaxpr) if r.primitive in {"scan", "while"}
              and any(n in downstream and n in to_norms for n in r.out_nodes)]
    if looped:
        return CheckResult(False, f"The program computes every example's gradient at once, but a "
                           f"`{looped[0].primitive}` loop{line_hint(looped[0])} between them and `norms` walks the "
                           "examples one at a time (what `lax.map` makes). Compute every norm at once: "
                           "`jnp.sqrt(sum(jnp.sum(g.reshape(B, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))`.",
                           [looped[0].evidence("a loop over the examples")])
    around, evidence = paths_around(trace, blocked, trace.inputs("x", "y"), ["grads", "norms"])
    if around:
        return CheckResult(False, f"The program computes every example's gradient at once, but "
                           f"{', '.join(f'`{a}`' for a in around[:4])} {'is' if len(around) == 1 else 'are'} also "
                           "computed from `x` and `y` by a path that goes around those gradients (a second "
                           "computation of the gradients, or a loop over the examples beside them). `grads` and "
                           "`norms` must come from the per-example gradients alone. " + HINT,
                           [blocked[0].evidence("per-example gradients")] + evidence)
    first = held[LEAVES[0]][0][0]
    whole = f"all {b} examples" if b > 1 else "the batch's one example"
    vmapped = bool(trace.source.of("vmap"))  # wording only, read from the source
    return CheckResult(True, f"The program computes the gradients of {whole} at once{line_hint(first)} "
                       f"({'batched by `jax.vmap`' if vmapped else 'batched by hand'}; the grader found every "
                       "example's gradient of every parameter in one array, evaluating your program on inputs it "
                       "never saw), and `grads` and `norms` come from them.",
                       [r.evidence("per-example gradients") for r, _ in (held[leaf][0] for leaf in LEAVES)])


def _grows_with_the_batch(trace: Trace) -> CheckResult | None:
    """A program that unrolls a loop over the examples holds more equations the more examples there are;
    one batched computation holds the same number for every batch size (compared across the shapes traced;
    one example left out: jax.numpy simplifies some operations there)."""
    grown = growth(trace, lambda t: t.args["x"][0] if t.args.get("x") and t.args["x"][0] >= 2 else None)
    if grown is None:
        return None
    small, few, large, many = grown
    return CheckResult(False, f"The traced program grows with the batch: {few} equations for {small} example(s), "
                       f"{many} for {large}. A Python loop over the examples unrolls into the program once per "
                       "example, so its gradients are B separate computations, not one batched pass. " + HINT)


def _not_batched(trace: Trace, missing: list[str], b: int) -> CheckResult:
    """Why no array holds every example's gradient at once: what the program does instead."""
    flow = trace.flow
    answer = flow.sources_of(flow.outputs)
    data = from_inputs(trace, "x", "y")
    loops = [r for r in iter_eqns(trace.jaxpr) if r.primitive in ("scan", "while")
             and any(n in data for n in r.in_nodes) and any(o in answer for o in r.out_nodes)]
    names = ", ".join(f"`{leaf}`" for leaf in missing)
    if loops:
        loop = loops[0]
        api = loop_name(loop.api) or f"a `{loop.primitive}` loop"
        return CheckResult(False, f"{api}{line_hint(loop)} computes the answer from the examples one step at a "
                           f"time: no array computed outside it holds every example's gradient of {names} (the "
                           "grader evaluated your program on fresh inputs and looked at every value it computes). "
                           "The examples are independent, so one batched computation gives all of them at once. "
                           + HINT, [loop.evidence("loop over the examples")])
    axes = axes_of(trace, BATCH)
    if axes.cuts_at:
        cutter = next((trace.eqn_at[p] for p in axes.cuts_at if p in trace.eqn_at), None)
        where = f" (`{cutter.primitive}`{line_hint(cutter)} cuts them out)" if cutter else ""
        return CheckResult(False, f"No array holds every example's gradient of {names} at once: the program "
                           f"works on examples cut out of `x` and `y` one at a time{where}, as a Python loop does, "
                           "so it computes B separate gradients and grows with the batch. " + HINT,
                           [cutter.evidence("cuts the examples apart")] if cutter else [])
    return CheckResult(False, f"No value the program computes holds every example's gradient of {names} (the "
                       "grader evaluated your program on fresh inputs and looked at every value it computes): the "
                       "gradients of the summed or averaged loss, or of one example, have no axis for the "
                       f"{b} examples. " + HINT)


def no_batch_jacobian(trace: Trace) -> CheckResult:
    b = trace.args["x"][0]
    flow = trace.flow
    answer = flow.sources_of(flow.outputs)
    axes = axes_of(trace, BATCH)
    for r in iter_eqns(trace.jaxpr):
        if not any(o in answer for o in r.out_nodes):
            continue
        for atom, n in zip(r.eqn["outvars"], r.out_nodes):
            labels, shape = axes.of(n), atom["shape"]
            basis = [i for i in Axes.basis_axes(labels) if i < len(shape) and shape[i] >= 2]
            batch = [i for i in range(min(len(labels), len(shape))) if axes.batch_roots(labels, i) and shape[i] >= 2]
            pair = next(((i, j) for i in basis for j in batch if i != j), None)
            if pair is None:
                continue
            i, j = pair
            if "jacrev" in r.api:
                how = (f"`jax.jacrev` of the vector of per-example losses pulls back {shape[i]} basis vectors, one "
                       "per loss, each through the whole batch")
            elif "jacfwd" in r.api:
                how = (f"`jax.jacfwd` pushes {shape[i]} tangents forward, one per parameter, each through every "
                       "example")
            else:
                how = (f"a basis of {shape[i]} vectors (rows of `jnp.eye` or one-hot rows) is pushed through the "
                       "whole batch, which is a Jacobian built by hand")
            return CheckResult(False, f"{how[:1].upper()}{how[1:]}: `{r.primitive}`{line_hint(r)} makes an array of "
                               f"shape {tuple(shape)}, with an axis of {shape[i]} basis vectors beside the axis of "
                               f"{b} examples. That is {shape[i]} times the work of one batched backward pass, and "
                               "most of the Jacobian is zero. " + HINT, [r.evidence("basis axis beside the batch axis")])
    return CheckResult(True, "No derivative computation holds an axis of basis vectors beside the batch axis: the "
                       "per-example gradients are not computed as a Jacobian of the batch's losses.")


CHECKS = {
    "batched-per-example-grads": batched_per_example_grads,
    "no-batch-jacobian": no_batch_jacobian,
}
