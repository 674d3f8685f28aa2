"""Requirement checks for per-example-gradient-clipping, read off the traced program.

**batched-per-example-grads**: the per-example gradients must come from *one* backward pass made by
autodiff (equations JAX marked ``transpose(jvp(...))``) that computes all B of them at once:

- it is one pass: the backward equations that compute from ``x``/``y`` form one connected computation (a
  Python loop of ``jax.grad`` calls leaves B disconnected passes, whatever their shapes, and so does calling
  vmap(grad) again on a masked batch), and none of them runs inside a ``scan``/``while`` loop (``lax.map``,
  ``fori_loop``);
- the pass carries the answer (``grader/toolkit/carries.py``): ``grads`` move when the pass's results are replaced
  (a pass whose result is discarded, times zero or swapped out with ``stop_gradient`` moves nothing), and
  ``x``/``y`` reach neither ``grads`` nor ``norms`` except through it (hand-written gradients beside it, a
  look-alike primitive). Only a pass that moves none of ``grads`` is decorative: a wrong clipping formula
  can make one leaf independent of the gradient's size;
- nothing that flows into ``grads`` or ``norms`` comes from a host callback or a primitive of the
  submission's own (``grader.toolkit.host_callback``): the clipping decides, per example, in the program;
- its results have an axis for the examples: ``x``'s batch axis (``grader/toolkit/axes.py``), or a basis axis of
  one vector per example (a Jacobian, which **no-batch-jacobian** reports). Gradients of the summed or mean
  loss have no such axis.

How the backward pass is written is free: an elementwise product broadcasting an unbatched weight, ``vjp``
under ``vmap``, ``grad`` of a sum over a vmapped loss with per-example copies of the parameters, transform
names nested in either order.

**no-batch-jacobian**: no derivative computation on the answer's path may hold an axis of basis vectors
(made by an ``iota``, as ``jax.jacrev``/``jax.jacfwd``/``jnp.eye`` make them) of length >= 2 beside the batch
axis: ``jacrev`` of the B losses pulls B basis vectors back through the whole batch, ``jacfwd`` pushes one
tangent per parameter through every example. ``vmap(jacrev(loss))`` of one example's scalar loss has a basis
of one vector and is a gradient.
"""
from __future__ import annotations

from grader.toolkit import (Axes, CheckResult, EqnRef, Trace, axes_of, carries, chain, from_inputs, groups,
                            host_callback, is_backward_autodiff, iter_eqns, line_hint)

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


def _backward(trace: Trace, answer: set) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if is_backward_autodiff(r.full_name_stack)
            and any(o in answer for o in r.out_nodes)]


def _passes(trace: Trace, backward: list[EqnRef], data: set) -> list[list[EqnRef]]:
    """The backward equations grouped into connected computations (one per ``grad``/``vjp`` call), keeping
    those that compute from ``x``/``y``."""
    index = {r.path: r for r in backward}
    parent = {p: p for p in index}

    def find(p: str) -> str:
        while parent[p] != p:
            parent[p] = parent[parent[p]]
            p = parent[p]
        return p

    made_by = trace.flow.made_by
    for r in backward:
        for n in r.in_nodes:
            src = made_by.get(n)
            if src and src[0] in index:
                parent[find(src[0])] = find(r.path)
        up = next((a for a in reversed(r.ancestors) if a.path in index), None)
        if up is not None:
            parent[find(r.path)] = find(up.path)
    comps: dict[str, list[EqnRef]] = {}
    for r in backward:
        comps.setdefault(find(r.path), []).append(r)
    return [c for c in comps.values() if any(n in data for r in c for n in r.in_nodes)]


def _consumers(trace: Trace) -> dict:
    """Node -> paths of the equations that read it (computed once per trace)."""
    cached = trace.__dict__.get("_consumers")
    if cached is None:
        cached = {}
        for r in iter_eqns(trace.jaxpr):
            for n in r.in_nodes:
                cached.setdefault(n, set()).add(r.path)
        trace.__dict__["_consumers"] = cached
    return cached


def _results(trace: Trace, comp: list[EqnRef], answer: set) -> list:
    """(equation, node) of every value the pass hands to the rest of the program on the answer's path."""
    members = {r.path for r in comp}
    consumers, outputs = _consumers(trace), set(trace.flow.outputs)
    return [(r, n) for r in comp for n in r.out_nodes if n in answer
            and (n in outputs or consumers.get(n, set()) - members)]


def _has_example_axis(axes: Axes, node, shape: list, b: int) -> bool:
    labels = axes.of(node)
    return any((axes.batch_roots(labels, i) or i in Axes.basis_axes(labels)) and shape[i] == b
               for i in range(min(len(labels), len(shape))))


def batched_per_example_grads(trace: Trace) -> CheckResult:
    b = trace.args["x"][0]
    flow = trace.flow
    answer = flow.sources_of(flow.outputs)
    data = from_inputs(trace, "x", "y")
    calls = trace.source.of(*REVERSE_SOURCE)
    if not calls:
        forward = trace.source.of("jvp", "jacfwd", "linearize")
        seen = (f" Forward-mode autodiff computes them instead ({trace.source.note(forward)}), pushing one "
                "tangent per parameter." if forward else " They are written out by hand.")
        return CheckResult(False, "Your source calls no `jax.grad`, `jax.value_and_grad`, `jax.vjp` or "
                           "`jax.jacrev` (read from your source), so no backward pass made by autodiff computes the "
                           "gradients." + seen + " " + HINT)
    backward = _backward(trace, answer)
    passes = _passes(trace, backward, data)
    if not passes and not backward and not any(chain(r.full_name_stack) for r in iter_eqns(trace.jaxpr)):
        return _unmarked(trace, answer, data, calls)
    if not passes:
        return _no_pass(trace, answer, backward)
    looped = next((r for c in passes for r in c if any(a.primitive in ("scan", "while") for a in r.ancestors)), None)
    if looped is not None:
        loop = next(a for a in reversed(looped.ancestors) if a.primitive in ("scan", "while"))
        api = loop_name(loop.api) or f"a `{loop.primitive}` loop"
        return CheckResult(False, f"The backward pass runs inside {api}{line_hint(loop)}: one step per example "
                           "(or per chunk of examples), each differentiating its own share. The examples are "
                           "independent, so one batched backward pass computes all of them at once. " + HINT,
                           [loop.evidence("loop around the backward pass"), looped.evidence("backward pass")])
    looped = _loop_after(trace, passes, answer)
    if looped is not None:
        api = loop_name(looped.api) or f"a `{looped.primitive}` loop"
        return CheckResult(False, f"The per-example gradients come from one batched backward pass, but {api}"
                           f"{line_hint(looped)} then works on them one step at a time to compute `grads` or `norms`. "
                           "The requirement forbids a loop over the examples for the norms and the clipping too: "
                           "compute every example's norm at once (`jnp.sum` over all axes but the batch axis, or "
                           "`jax.vmap` of the norm of one example).",
                           [looped.evidence("loop over the gradients"), passes[0][0].evidence("backward pass")])
    axes = axes_of(trace, BATCH)
    cut = next(((r, axes.cut[n]) for c in passes for r in c for n in r.in_nodes if axes.cut.get(n)), None)
    if cut is not None:
        r, names = cut
        cutter = next((trace.eqn_at[p] for p in axes.cuts_at if p in trace.eqn_at and axes.cuts_at[p] & names), None)
        where = f" (`{cutter.primitive}`{line_hint(cutter)} cuts them out)" if cutter else ""
        return CheckResult(False, f"The backward pass{line_hint(r)} works on examples cut out of "
                           f"{', '.join(f'`{n}`' for n in sorted(names))} one at a time{where}: a Python loop over "
                           "the examples unrolls one copy of the loss and of its derivative per example, even under "
                           "a single `jax.grad` call. " + HINT,
                           ([cutter.evidence("cuts the examples apart")] if cutter else []) +
                           [r.evidence("backward pass on one example")])
    unbatched = [(c, r, shape) for c in passes for r, shape in _without_example_axis(trace, axes, c, answer, b)]
    if len(passes) > 1:
        firsts = [min(c, key=lambda r: r.eqn.get("line") or 0) for c in passes]
        split = {id(c) for c, _, _ in unbatched}
        if split:
            why = (f"{len(split)} of them each return the gradient of one example or one part of the batch, as a "
                   "Python loop of `jax.grad` (or `jax.vjp`) calls over the examples does, and the program grows "
                   "with the batch")
        else:
            why = ("each over the whole batch: the same per-example gradients are computed more than once, or the "
                   "batch is passed through several times; compute them once and reuse the result")
        return CheckResult(False, f"{len(passes)} separate backward passes compute from `x` and `y` ({why}). The B "
                           "per-example gradients must come from one batched backward pass. " + HINT,
                           [r.evidence("a separate backward pass") for r in firsts[:6]])
    carry = _carry(trace)
    if carry is not None and not carry.ok:
        return CheckResult(False, _foreign_note(trace, carry) + carry.message() + " " + HINT,
                           [passes[0][0].evidence("backward pass")] + carry.around_evidence)
    if unbatched:
        _, r, shape = unbatched[0]
        return CheckResult(False, f"The backward pass{line_hint(r)} returns gradients without an axis for the "
                           f"examples (e.g. `{r.primitive}` of shape {tuple(shape)}): it differentiates the summed or "
                           "averaged loss, or one example, not each of the B examples. " + HINT,
                           [r.evidence("gradient without an example axis")])
    hosted = host_callback(trace, "", "part of the clipping (or of what `grads` and `norms` come from) is "
                           "computed by Python on the host, outside the traced program",
                           "Compute the norms, the clipping factors `max_norm / jnp.maximum(norms, max_norm)` and "
                           "the mean with JAX's own operations.")
    if not hosted.passed:
        return hosted
    vmapped = bool(trace.source.of("vmap"))  # wording only, read from the source
    whole = f"all {b} examples" if b > 1 else "the batch's one example"
    return CheckResult(True, f"One backward pass{line_hint(passes[0][0])} computes the gradients of {whole} at once "
                       f"({'batched by `jax.vmap`' if vmapped else 'batched by hand'}), and `grads` and `norms` come "
                       "from it.", [r.evidence("batched backward pass") for r in passes[0][:3]])


REVERSE_SOURCE = ("grad", "value_and_grad", "vjp", "jacrev")


def _unmarked(trace: Trace, answer: set, data: set, calls: list) -> CheckResult:
    """A program without any of the marks autodiff leaves (which are the learner's process's to write, so
    they only ever refuse): decided by what the rebuilt program itself shows. No loop computes the answer from
    the examples, nothing comes from the host, and the source calls reverse-mode autodiff."""
    loops = [r for r in iter_eqns(trace.jaxpr) if r.primitive in ("scan", "while")
             and any(n in data for n in r.in_nodes) and any(o in answer for o in r.out_nodes)]
    if loops:
        loop = loops[0]
        api = loop_name(loop.api) or f"a `{loop.primitive}` loop"
        return CheckResult(False, f"{api}{line_hint(loop)} computes the answer from the examples one step at a "
                           "time. The examples are independent, so one batched backward pass computes all of them "
                           "at once. " + HINT, [loop.evidence("loop over the examples")])
    hosted = host_callback(trace, "", "part of the clipping (or of what `grads` and `norms` come from) is "
                           "computed by Python on the host, outside the traced program",
                           "Compute the norms, the clipping factors `max_norm / jnp.maximum(norms, max_norm)` and "
                           "the mean with JAX's own operations.")
    if not hosted.passed:
        return hosted
    return CheckResult(True, f"The gradients come from reverse-mode autodiff ({trace.source.note(calls)}) with no "
                       "loop over the examples.")


def _loop_after(trace: Trace, passes: list, answer: set):
    """A ``scan``/``while`` loop (``lax.map``, ``fori_loop``...) on the answer's path that reads what the backward
    pass computed: the norms or the clipping computed one example (or chunk) per step."""
    flow = trace.flow
    after = flow.reach(n for c in passes for r in c for n in r.out_nodes)
    return next((r for r in iter_eqns(trace.jaxpr) if r.primitive in ("scan", "while")
                 and any(o in answer for o in r.out_nodes) and any(n in after for n in r.in_nodes)), None)


def _without_example_axis(trace: Trace, axes: Axes, comp: list[EqnRef], answer: set, b: int) -> list:
    found = []
    for r, n in _results(trace, comp, answer):
        atom = next((a for a in r.eqn["outvars"] if n.endswith("|" + str(a.get("id")))), None)
        shape = atom["shape"] if atom else []
        if not _has_example_axis(axes, n, shape, b):
            found.append((r, shape))
    return found


def _no_pass(trace: Trace, answer: set, backward: list[EqnRef]) -> CheckResult:
    forward = [r for r in iter_eqns(trace.jaxpr) if "jvp" in chain(r.full_name_stack)
               and any(o in answer for o in r.out_nodes)]
    foreign = [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")
               and any(o in answer for o in r.out_nodes)]
    if foreign:
        seen = (f" They come through `{foreign[0].primitive[8:]}`{line_hint(foreign[0])}, a primitive your code "
                "defined itself, whose work the grader cannot see.")
    elif backward:
        seen = (f" A backward pass runs{line_hint(backward[0])}, but on a function that reads neither `x` nor `y`: "
                "it differentiates something other than the examples' losses, and the gradients are computed "
                "another way.")
    elif forward:
        seen = (f" Forward-mode autodiff (`jax.jvp`/`jax.jacfwd`, e.g. `{forward[0].primitive}`"
                f"{line_hint(forward[0])}) computes them instead, pushing one tangent per parameter.")
    else:
        seen = " They are written out by hand."
    return CheckResult(False, "No backward pass made by reverse-mode autodiff (equations marked "
                       "`transpose(jvp(...))`) computes the gradients from `x` and `y`." + seen + " " + HINT,
                       [r.evidence() for r in (foreign or backward or forward)[:3]])


def _foreign_note(trace: Trace, carry) -> str:
    """A sentence naming a primitive the code defined itself on the path around the backward pass, if any."""
    paths = {e.path for e in carry.around_evidence}
    flow = trace.flow
    on_path = flow.reach(trace.inputs("x", "y")) & flow.sources_of(flow.outputs)
    foreign = next((r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")
                    and any(o in on_path for o in r.out_nodes)), None)
    if foreign is None or foreign.path in paths:
        return ""
    return (f"`{foreign.primitive[8:]}`{line_hint(foreign)} is a primitive your code defined itself, not JAX's, "
            "and its results reach the answer. ")


def _carry(trace: Trace):
    """Whether the backward pass carries the answer: ``grads`` move when its results move, and neither
    ``grads`` nor ``norms`` is computed from ``x``/``y`` around it (a wrong formula can make ``norms``
    independent of the gradients, so only the data flow is asked of it). None when no group was found."""
    passes = [g for g in groups(trace) if "transpose" in g.chain]
    if not passes:
        return None
    depth = min(g.scope.count("/") for g in passes)
    tried = []
    for g in passes:
        if g.scope.count("/") != depth:
            continue
        carry = carries(trace, g, outputs=["grads", "norms"], around_from=("x", "y"), what="the backward pass")
        carry.outputs = [o for o in carry.outputs if not o.startswith("norms")]
        # A wrong clipping formula can make a leaf independent of the gradient's size (per-leaf clipping of a
        # scalar to +-C): only a pass that moves none of `grads` is decorative; a leaf computed beside the
        # pass is a path around it, which the data flow finds.
        carry.still = [o for o in carry.still if o in carry.outputs] if carry.decorative else []
        tried.append(carry)
    return next((c for c in tried if c.ok), tried[0])


def no_batch_jacobian(trace: Trace) -> CheckResult:
    b = trace.args["x"][0]
    flow = trace.flow
    answer = flow.sources_of(flow.outputs)
    axes = axes_of(trace, BATCH)
    for r in iter_eqns(trace.jaxpr):
        if not chain(r.full_name_stack) or not any(o in answer for o in r.out_nodes):
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
