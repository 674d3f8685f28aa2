"""Requirement checks for mixed-precision-with-loss-scaling, read off the traced program.

Each required structure must carry the answer (``grader/toolkit/carries.py``):

- float16-matmuls: the network's products take float16 operands, and `x`, `w1` and `w2` reach the loss (and
  `x` the new parameters and `applied`) only through products with a float16 operand: a float32 copy of a
  product beside them is a path around them. Each forward float16 product must move the loss when the grader
  replaces its result (the probes).
- scale-inside-grad: matrix products that compute the new parameters run on values scaled by `loss_scale`
  (the verifier halves `loss_scale` and sees their results halve: ``experiments.py``), the update does not
  change with `loss_scale` (it is divided out after the backward pass), and `x` and `y` reach the parameters
  only through those products and the step's decision (data flow). Where autodiff was asked for is not read.
- skip-with-where: every parameter leaf comes out of a ``select_n`` or ``cond`` whose condition is one
  scalar boolean, the same for every leaf, computed from the gradients (values that feed the update but not
  the loss); `applied` is computed from the gradients too; flipping that boolean moves the parameters; and
  no host callback (or primitive of the submission's own) feeds the test, the choices' conditions or
  `applied` (``grader.toolkit.host_callback``).

Probes on a case whose step is skipped say nothing about the update (it is not used): there only the data
flow counts. The hidden cases put a normal step first in each shape, so the probed case applies its step.
"""
from __future__ import annotations

from grader.toolkit import (MATMUL, CheckResult, EqnRef, Evidence, Node, Trace, carries, find, host_callback,
                            iter_eqns, line_hint, node, paths_around)

HALF = "float16"
WEIGHTS = ("params['w1']", "params['w2']")
SHAPE_ONLY = {"broadcast_in_dim", "reshape", "convert_element_type", "squeeze", "expand_dims", "copy", "copy_p"}
SELECT = {"select_n", "cond"}
PASS_THROUGH = {"jit", "pjit", "closed_call", "core_call", "remat2", "checkpoint", "custom_jvp_call",
                "custom_vjp_call"}


# ----------------------------------------------------------------------------------------------------
# Shared facts

def _leaf_nodes(trace: Trace, *names: str) -> list[Node]:
    """Input nodes of the named argument leaves (``params['w1']``) or whole arguments (``x``)."""
    return [n for n, arg in zip(trace.flow.inputs, trace.input_names)
            if n is not None and (arg in names or arg.split("[")[0] in names)]


def _output_nodes(trace: Trace, name: str) -> list[Node]:
    return [trace.flow.outputs[k] for k in trace.output_index(name) if trace.flow.outputs[k] is not None]


def _dtypes(ref: EqnRef) -> list[str]:
    return [a.get("dtype", "") for a in ref.eqn["invars"]]


def _is_half(ref: EqnRef) -> bool:
    return HALF in _dtypes(ref)


def _step_taken_on_probe(trace: Trace) -> bool:
    """Whether the probed case applied its step (the probes measure `applied`'s largest value: 1 or 0)."""
    index = trace.output_index("applied")
    for t in (trace.probes or {}).get("targets", []):
        if "scale" in t and index and index[0] < len(t["scale"]):
            return t["scale"][index[0]] > 0.5
    return True


def _moved(trace: Trace, target: EqnRef | Group, output: str) -> bool | None:
    """Whether replacing the target's results moved ``output`` on the probed case (None: not known)."""
    result = carries(trace, target, outputs=[output])
    if not result.measured or result.unknown or result.invisible:  # invisible: not seen moving, not proven still
        return None
    return not result.still


def _evidence(refs: list[EqnRef], note: str, limit: int = 4) -> list[Evidence]:
    return [r.evidence(note) for r in refs[:limit]]


def _foreign(trace: Trace) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]


# ----------------------------------------------------------------------------------------------------
# float16-matmuls

def float16_matmuls(trace: Trace) -> CheckResult:
    flow = trace.flow
    dots = find(trace.jaxpr, MATMUL)
    from_data = flow.reach(_leaf_nodes(trace, "x", *WEIGHTS))
    to_loss = flow.sources_of(_output_nodes(trace, "loss"))
    forward = [d for d in dots if any(n in from_data for n in d.in_nodes) and any(n in to_loss for n in d.out_nodes)]
    if not forward:
        fake = [r for r in _foreign(trace)]
        if fake:
            return CheckResult(False, f"`{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code "
                               "defined itself, not JAX's `dot_general`, and no JAX matrix product computes the "
                               "loss. Use `@` (or `jnp.dot`) on float16 arrays.", _evidence(fake, "not a JAX primitive"))
        return CheckResult(False, "No matrix product computes the loss from `x` and the weights: the network's "
                           "two layers must be matrix products (`@`, `jnp.dot`, `jnp.einsum`) on float16 "
                           "operands, not element-wise products and sums.")
    not_half = [d for d in forward if set(_dtypes(d)) != {HALF}]
    if not_half:
        d = not_half[0]
        kinds = " and ".join(dict.fromkeys(_dtypes(d)))
        if "bfloat16" in kinds:
            why = ("This problem asks for float16: bfloat16 keeps float32's range, so its gradients would not "
                   "overflow where float16's do, and the step this problem defines would not be skipped.")
        else:
            why = ("Cast `x` and the parameters to `jnp.float16` before the product: values rounded to float16 "
                   "and converted back to float32 still make a float32 product, which is what an accelerator "
                   "would then run.")
        return CheckResult(False, f"The matrix product{line_hint(d)} that computes the loss takes {kinds} "
                           f"operands, not float16. {why}", _evidence(not_half, f"{kinds} operands"))
    half = [d for d in dots if _is_half(d)]
    around = {}
    for source, outputs in (("x", None), ("params['w1']", ["loss"]), ("params['w2']", ["loss"])):
        names, evidence = paths_around(trace, half, _leaf_nodes(trace, source), outputs)
        if names:
            around[source] = (names, evidence)
    if around:
        source, (names, evidence) = next(iter(around.items()))
        shown = ", ".join(f"`{n}`" for n in names[:4])
        where = f" (for instance `{evidence[0].primitive}`{_at(evidence[0])})" if evidence else ""
        return CheckResult(False, f"`{source}` reaches {shown} by a path that goes around every float16 matrix "
                           f"product{where}: part of the answer is computed another way, in float32 or without "
                           "a matrix product. Compute the loss and the gradients from the float16 products "
                           "alone.", evidence)
    single = [d for d in dots if not _is_half(d) and any(n in from_data for n in d.in_nodes)
              and flow.outputs_reached(d.out_nodes)]
    if single:
        d = single[0]
        return CheckResult(False, f"A float32 matrix product{line_hint(d)} is computed from `x` or the weights "
                           "and flows into what the function returns, beside the float16 ones. Every matrix "
                           "product of the step runs on float16 operands (autodiff's products of the backward "
                           "pass take the float16 values too).", _evidence(single, "float32 matrix product"))
    if _step_taken_on_probe(trace):
        for d in forward:
            moved = _moved(trace, d, "loss")
            if moved is False:
                return CheckResult(False, f"The float16 matrix product{line_hint(d)} is decorative: when the grader "
                                   "replaced its result with other values, the loss did not change (its result "
                                   "is discarded, multiplied by zero or selected away). Compute the loss from "
                                   "it.", [d.evidence("does not move the loss")])
    return CheckResult(True, f"{len(forward)} matrix product{'s' if len(forward) != 1 else ''} of the forward pass "
                       f"take float16 operands{line_hint(forward[0])}, and the loss and the gradients come from "
                       "float16 products only.", _evidence(forward, "float16 product"))


def _at(e: Evidence) -> str:
    bits = [b for b in (f"your line {e.source_line}" if e.source_line else "",
                        f"jaxpr line {e.jaxpr_line}" if e.jaxpr_line else "") if b]
    return f" at {', '.join(bits)}" if bits else ""


# ----------------------------------------------------------------------------------------------------
# scale-inside-grad


def _scaled_products(trace: Trace) -> list[EqnRef]:
    """Matrix products with an operand computed from `loss_scale` whose results reach the new parameters: a
    fact of the rebuilt program's data flow (a scale applied only after the gradients enters none)."""
    from_scale = trace.flow.reach(_leaf_nodes(trace, "loss_scale"))
    to_params = trace.flow.sources_of(_output_nodes(trace, "params"))
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive in MATMUL
            and any(n in from_scale for n in r.in_nodes) and any(n in to_params for n in r.out_nodes)]


def scale_inside_grad(trace: Trace) -> CheckResult:
    """Decided by the rebuilt program and what it computes: its matrix products that compute the update must
    run on values scaled by `loss_scale` (the verifier halves `loss_scale` and sees their results halve:
    ``experiments.py``), the update must not change with `loss_scale` (it is divided out after), and `x` and `y`
    must reach the new parameters only through those products (and the step's decision). How the gradients
    are computed is the learner's; where autodiff was asked for is not read."""
    scaled = _scaled_products(trace)
    measured = trace.experiments.get("scaled_products")
    if measured is None:
        if any(t.experiments.get("scaled_products") for t in trace.siblings):
            return CheckResult(True, "Measured on the other input shapes.")
        return CheckResult(False, "The grader could not evaluate this program with another `loss_scale`, so it "
                           "cannot confirm that the backward pass runs on scaled values.")
    if "error" in measured:
        return CheckResult(False, f"The grader could not evaluate this program with another `loss_scale` "
                           f"({measured['error']}), so it cannot confirm that the backward pass runs on scaled "
                           "values.")
    moved = {m["path"] for m in measured.get("scaled", []) if m.get("product", True)}
    on_scaled = [r for r in scaled if r.path in moved]
    if not on_scaled:
        how = ("`loss_scale` is used only where no matrix product reads it (after the gradients are computed, "
               "which is too late)" if trace.flow.outputs_reached(_leaf_nodes(trace, "loss_scale")) else
               "`loss_scale` is never used")
        if scaled:
            how = ("matrix products read `loss_scale`, but their results do not change with it (the grader halved "
                   "`loss_scale` and none of them halved)")
        return CheckResult(False, f"{how}: no matrix product that computes the update runs on scaled values, so "
                           "in float16 small gradients underflow just as without a scale. Multiply the loss by "
                           "`loss_scale` inside the function you differentiate.",
                           _evidence(scaled, "reads loss_scale, not scaled by it"))
    if not measured.get("same_update", False):
        return CheckResult(False, f"The matrix products{line_hint(on_scaled[0])} run on values scaled by "
                           "`loss_scale`, but the update changes with `loss_scale` (the grader halved it): the "
                           "gradients are not divided by `loss_scale` after the backward pass. Divide them by it "
                           "once the gradients are computed.", _evidence(on_scaled, "product on scaled values"))
    decision = [p for p, _ in _deciders(trace).values()]  # the skip's test is skip-with-where's business
    refs = {r.path: r for r in iter_eqns(trace.jaxpr)}
    halved = [refs[m["path"]].out_nodes[m["k"]] for m in measured.get("scaled", [])
              if m["path"] in refs and m["k"] < len(refs[m["path"]].out_nodes)]
    # a value the verifier saw halve with `loss_scale` is on the scaled backward pass (a bias's gradient is a
    # sum of scaled values, not a product); a path to the new parameters around all of them is a second,
    # unscaled computation of the gradients
    around, evidence = paths_around(trace, on_scaled + decision, trace.inputs("x", "y"), ["params"], also=halved)
    if around:
        return CheckResult(False, f"The matrix products{line_hint(on_scaled[0])} run on scaled values, but "
                           f"{', '.join(f'`{a}`' for a in around[:4])} {'is' if len(around) == 1 else 'are'} "
                           "also computed from `x` and `y` by a path around them (a second, unscaled computation "
                           "of the gradients)." + _master_hint(trace) + " Update the parameters with the "
                           "gradients computed from the scaled loss.", evidence)
    return CheckResult(True, f"The matrix products that compute the update{line_hint(on_scaled[0])} run on values "
                       "scaled by `loss_scale` (the grader halved it and their results halved), the update itself "
                       "does not change with `loss_scale`, and it comes from those products alone.",
                       _evidence(on_scaled, "backward product on scaled values"))


# ----------------------------------------------------------------------------------------------------
# skip-with-where

def _producer(trace: Trace, start: Node | None) -> EqnRef | None:
    """The equation that computes the value at ``start``, looking through reshapes, broadcasts, casts and
    the boundaries of `jit`-like sub-programs."""
    flow, at = trace.flow, start
    for _ in range(256):
        if at is None:
            return None
        made = flow.made_by.get(at)
        if made is None:  # a sub-program's input: the operand it was given
            back = flow.back.get(at, [])
            at = back[0] if len(back) == 1 else None
            continue
        path, eqn = made
        ref = trace.eqn_at.get(path)
        if ref is None:
            return None
        if ref.primitive in SHAPE_ONLY and eqn["invars"] and "id" in eqn["invars"][0]:
            at = node(ref.scope, eqn["invars"][0])
            continue
        if ref.primitive in PASS_THROUGH and eqn["subjaxprs"]:
            back = [b for b in flow.back.get(at, []) if not b.endswith(("|out", "|eqn"))]
            at = back[0] if len(back) == 1 else None
            if at is None:
                return ref
            continue
        return ref
    return None


def _condition(ref: EqnRef) -> Node | None:
    atom = ref.eqn["invars"][0] if ref.eqn["invars"] else {}
    return node(ref.scope, atom)


_SELECTORS: dict[int, tuple[Trace, list]] = {}


def _selectors(trace: Trace) -> list[tuple[EqnRef, EqnRef | None, bool, set[int]]]:
    """Every ``select_n``/``cond`` that chooses parameter values on the way to the returned parameters:
    (the choice, the equation computing its condition, whether that is one boolean of shape (), the
    parameter outputs it reaches). Computed once per trace."""
    cached = _SELECTORS.get(id(trace))
    if cached is not None and cached[0] is trace:
        return cached[1]
    if len(_SELECTORS) > 32:
        _SELECTORS.clear()
    flow = trace.flow
    params_out = trace.output_index("params")
    found = []
    for ref in find(trace.jaxpr, SELECT):
        reached = set(flow.outputs_reached(ref.out_nodes)) & set(params_out)
        if not reached or not any(a.get("dtype", "").startswith(("float", "bfloat")) for a in ref.eqn["outvars"]):
            continue  # a choice of integers (an index) is not a choice of parameters
        producer = _producer(trace, _condition(ref))
        out = producer.eqn["outvars"][0] if producer is not None and producer.eqn["outvars"] else {}
        scalar = producer is not None and out.get("shape") == [] and out.get("dtype") == "bool"
        found.append((ref, producer, scalar, reached))
    _SELECTORS[id(trace)] = (trace, found)
    return found


def _deciders(trace: Trace) -> dict[str, tuple[EqnRef, set[int]]]:
    """The equations computing a scalar condition that chooses parameters, with the outputs they choose."""
    out: dict[str, tuple[EqnRef, set[int]]] = {}
    for _, producer, scalar, reached in _selectors(trace):
        if scalar:
            out.setdefault(producer.path, (producer, set()))[1].update(reached)
    return out


def _master_hint(trace: Trace) -> str:
    """A sentence when the returned parameters are converted from float16 values (float16 master weights,
    where an update below float16's spacing is lost in rounding)."""
    for k in trace.output_index("params"):
        made = trace.flow.made_by.get(trace.flow.outputs[k])
        if made and made[1]["primitive"] == "convert_element_type" and \
                made[1]["invars"] and made[1]["invars"][0].get("dtype") == HALF:
            return (" The returned parameters are converted from float16 values: updated in float16, where an "
                    "update smaller than float16's spacing is lost in rounding. Keep the master weights in "
                    "float32 and update those.")
    return ""


def skip_with_where(trace: Trace) -> CheckResult:
    flow = trace.flow
    params_out = trace.output_index("params")
    selectors = _selectors(trace)
    if not selectors:
        return CheckResult(False, "No `jnp.where` or `lax.cond` chooses the new parameters: the update is always "
                           "applied, or skipped another way (a 0/1 factor, indexing a stack of the old and new "
                           "values). Keep the old parameters with `jnp.where(ok, p - lr * g, p)`, where `ok` is "
                           "one boolean for the whole step.")
    scalar = [s for s in selectors if s[2]]
    fixed = [s for s in selectors if s[1] is None and _condition(s[0]) not in flow.made_by
             and not flow.back.get(_condition(s[0])) and _condition(s[0]) not in flow.inputs]
    if not scalar and fixed:
        ref = fixed[0][0]
        return CheckResult(False, f"The choice of the new parameters, `{ref.primitive}`{line_hint(ref)}, is made on a "
                           "condition the traced program does not compute: a constant, fixed while your function "
                           "was traced (a Python value or a global), so it cannot depend on the gradients. Compute "
                           "the test from the gradients with `jnp.isfinite` and choose with `jnp.where` on it.",
                           _evidence([s[0] for s in fixed], "condition fixed at trace time"))
    if not scalar:
        ref = selectors[0][0]
        shape = next((a.get("shape") for a in [ref.eqn["invars"][0]]), None)
        return CheckResult(False, f"The only choice on the way to the new parameters, `{ref.primitive}`"
                           f"{line_hint(ref)}, is element by element (its condition has shape "
                           f"{tuple(shape or ())}, as in `jnp.nan_to_num` or a masked update), not once for the "
                           "step: skipping a step is one decision, taken with `jnp.where` or `lax.cond` on one "
                           "boolean of shape () that says whether every gradient is finite.",
                           _evidence([s[0] for s in selectors], "element-wise choice"))
    deciders = _deciders(trace)
    blocked = [n for producer, _ in deciders.values() for n in producer.out_nodes]
    hosted = host_callback(
        trace, "", "Python on the host decides the step, outside the traced program",
        "Decide the step in the traced program: `ok = jnp.all(jnp.stack([jnp.isfinite(g).all() for g in "
        "jax.tree.leaves(grads)]))`, then `jnp.where(ok, p - lr * g, p)`.",
        into=blocked + [_condition(s[0]) for s in selectors] + _output_nodes(trace, "applied"),
        into_name="the test that decides the step")
    if not hosted.passed:
        return hosted
    data = flow.reach(trace.inputs("x", "y"))
    update_side = data & flow.sources_of([flow.outputs[k] for k in params_out], blocked)
    gradients = update_side - flow.sources_of(_output_nodes(trace, "loss"))
    from_gradients = flow.reach(gradients)
    whole = [(p, r) for p, r in deciders.values() if r >= set(params_out)]
    if not whole:
        p, r = next(iter(deciders.values()))
        missing = [trace.output_names[k] for k in params_out if k not in r]
        return CheckResult(False, f"No single test decides every parameter: the test{line_hint(p)} chooses "
                           f"{len(r)} of the {len(params_out)} parameter arrays, not "
                           f"{', '.join(f'`{m}`' for m in missing[:4])}. Compute one boolean for the whole step "
                           "(every gradient finite) and use it for every leaf.",
                           [v[0].evidence("decides some leaves only") for v in deciders.values()][:4])
    from_grads = [(p, r) for p, r in whole if any(n in from_gradients for n in p.out_nodes)]
    if not from_grads:
        p = whole[0][0]
        return CheckResult(False, f"The test{line_hint(p)} that chooses the parameters is not computed from the "
                           "gradients (it reads the loss, the inputs or a constant): the step must be skipped "
                           "exactly when a gradient is `inf` or `NaN`. Test the gradients with `jnp.isfinite`.",
                           [p.evidence("test not computed from the gradients")])
    producer = from_grads[0][0]
    choosers = [s[0] for s in scalar if s[1] is producer]
    names, evidence = paths_around(trace, choosers + [producer], trace.inputs("x", "y"), ["params"])
    if names:
        return CheckResult(False, f"{', '.join(f'`{n}`' for n in names[:4])} {'is' if len(names) == 1 else 'are'} also "
                           "computed from the gradients by a path around the choice"
                           f"{line_hint(choosers[0])}: the step is skipped (partly) another way, by arithmetic "
                           "beside it. Return what `jnp.where(ok, p - lr * g, p)` chooses.", evidence)
    applied = trace.output_index("applied")
    if not applied or flow.outputs[applied[0]] not in from_gradients:
        return CheckResult(False, "`applied` is not computed from the gradients: return the same test that "
                           f"decides the step{line_hint(producer)}.", [producer.evidence("the step's test")])
    if _step_taken_on_probe(trace):
        moved = _moved(trace, producer, "params")
        if moved is False:
            return CheckResult(False, f"The test{line_hint(producer)} is decorative: when the grader flipped it, the "
                               "parameters did not change, so something else decides the step. Choose the "
                               "parameters with `jnp.where(ok, ...)` on that test." + _master_hint(trace),
                               [producer.evidence("flipping it moves nothing")])
    chooser = choosers[0]
    return CheckResult(True, f"One boolean{line_hint(producer)}, computed from the gradients, decides the step "
                       f"through `{'jnp.where' if chooser.primitive == 'select_n' else 'lax.cond'}`"
                       f"{line_hint(chooser)}, and `applied` comes from the gradients too.",
                       [producer.evidence("the step's test"), chooser.evidence("chooses the parameters")])


CHECKS = {
    "float16-matmuls": float16_matmuls,
    "scale-inside-grad": scale_inside_grad,
    "skip-with-where": skip_with_where,
}
