"""Requirement checks for adamw-from-scratch, read off the traced program.

All four are exact facts of the data flow (``grader/toolkit/dataflow.py``), so a term multiplied by zero, selected
away or added and subtracted again still counts as flowing:

- `leaf-by-leaf`: the leaves of `params`, `grads`, `mu` and `nu` are labelled with their place
  (``Flow.origins``); a returned leaf computed from an array that holds values of another place fails
  (array granularity: a slice of a concatenation of all leaves counts, whatever the slice holds).
- `decoupled-weight-decay`: no path from any leaf of `params` to the returned `mu` or `nu`; where the path
  goes through an opaque primitive (a callback), the message says the grader cannot see inside it.
- `bias-correction-from-count`: `count` reaches the new `params`; no `while` loop's condition is reached
  from `count` (its trip count would grow with the step); no array is larger than a table of steps could
  be kept under (a clamped table short enough to pass that bound gives wrong numbers at large counts).
- `no-host-callback`: nothing feeding the result is a host callback or a primitive the submission defined.
"""
from math import prod

from grader.toolkit import (CheckResult, Trace, dotted, host_callback, iter_eqns, line_hint, match_leaves, name_path,
                            opaque_sources, shown)

TREES = ("params", "grads", "mu", "nu")
"""Arguments whose leaves have a place; the scalars may reach every leaf."""
RETURNED = ("params", "mu", "nu")
TABLE_FLOOR = 256
"""No array needs more entries than this (or twice the parameters): a leaf has at most 16, all twelve
leaves concatenated 192. A table of powers clamped at 256 steps is off by a quarter at large counts."""


def leaf_by_leaf(trace: Trace) -> CheckResult:
    match = match_leaves(trace, TREES, RETURNED)
    if not match.checked:
        return CheckResult(False, "None of the returned leaves sits at a place the input trees have (the grader "
                           f"found {shown(trace.output_names) or 'nothing'}). Return `{{\"params\": ..., \"mu\": ..., "
                           f"\"nu\": ..., \"count\": ...}}`, each tree with the structure of `params`.")
    if match.wrong:
        name, node = match.wrong[0]
        place = name_path(name)[1:]
        meet = match.meeting_point()
        where = f" They meet at `{meet.primitive.split(':')[-1]}`{line_hint(meet)}." if meet else ""
        return CheckResult(False, f"`{name}` is computed from arrays that also hold values of leaves at other places "
                           f"({shown(match.others(name, node))}), not only from `{dotted(('params',) + place)}` and "
                           f"the same place in `grads`, `mu` and `nu`.{where} {len(match.wrong)} of the "
                           f"{match.checked} returned leaves are. Each leaf's update needs only its own leaves: map "
                           "it over the trees with `jax.tree.map`, instead of flattening them into one vector or "
                           "combining leaves.",
                           [meet.evidence("leaves of different places meet here")] if meet else [])
    extra = (f" ({match.elsewhere} other returned leaves sit at places the input trees do not have; the test "
             "cases report the structure.)" if match.elsewhere else "")
    return CheckResult(True, f"Each of the {match.checked} returned leaves of `params`, `mu` and `nu` is computed "
                       f"from the leaves at its own place.{extra}", match.made)


def decoupled_weight_decay(trace: Trace) -> CheckResult:
    labels = {node: "params" for node in trace.inputs("params")}
    found = trace.flow.origins(labels)
    moments = [(name, node) for name, node in zip(trace.output_names, trace.flow.outputs)
               if name_path(name)[:1] in (("mu",), ("nu",))]
    if not moments:
        return CheckResult(False, "The returned value has no `mu` or `nu`, so the grader cannot tell what the "
                           "moments are computed from. Return `{\"params\": ..., \"mu\": ..., \"nu\": ..., "
                           "\"count\": ...}`.")
    reached = [name for name, node in moments if found.get(node) is not None]
    if reached:
        sources = trace.flow.sources_of([dict(moments)[reached[0]]])
        meet = next((ref for ref in trace.eqn_at.values()
                     if any(found.get(n) for n in ref.out_nodes) and any(n in sources for n in ref.out_nodes)
                     and any(found.get(n) is None for n in ref.in_nodes)), None)
        shown = ", ".join(f"`{n}`" for n in reached[:4]) + (", ..." if len(reached) > 4 else "")
        fix = ("In AdamW the moments see only `grads`; add `weight_decay * p` to the Adam direction, "
               "`p - lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p)`.")
        opaque = meet is not None and meet.primitive in opaque_names(trace)
        if opaque:
            return CheckResult(False, f"`params` and the gradients both go into `{meet.primitive.split(':')[-1]}`"
                               f"{line_hint(meet)}, whose work the grader cannot see, and {shown} come out of it: "
                               "the grader cannot confirm that the weight decay stays out of the moments. " + fix,
                               [meet.evidence("params enter the moments here")])
        where = f" (they meet at `{meet.primitive}`{line_hint(meet)})" if meet else ""
        return CheckResult(False, f"Values computed from `params` flow into {shown}{where}, as they do when "
                           "`weight_decay * params` is added to the gradient (even multiplied by zero). That is "
                           "Adam with an L2 penalty, whose decay Adam's normalisation then rescales. " + fix,
                           [meet.evidence("params enter the moments here")] if meet else [])
    return CheckResult(True, f"None of the {len(moments)} returned moment leaves depends on `params`: the weight "
                       "decay stays out of the moments.")


def opaque_names(trace: Trace) -> set[str]:
    return {r.primitive for r in opaque_sources(trace)}


def _arrays(trace: Trace):
    """(atom, equation or None) for every constant and every equation result, nested programs included."""
    for atom in trace.jaxpr.get("constvars", []):
        yield atom, None
    for ref in iter_eqns(trace.jaxpr):
        for atom in ref.eqn["outvars"]:
            yield atom, ref
        for sub in ref.eqn["subjaxprs"].values():
            for atom in sub.get("constvars", []):
                yield atom, ref


def _param_entries(shapes) -> int:
    if isinstance(shapes, dict):
        return sum(_param_entries(v) for v in shapes.values())
    if isinstance(shapes, list) and shapes and not all(isinstance(d, int) for d in shapes):
        return sum(_param_entries(v) for v in shapes)
    return prod(shapes) if isinstance(shapes, list) else 1


def bias_correction_from_count(trace: Trace) -> CheckResult:
    count = trace.inputs("count")
    reached = trace.flow.reach(count)
    params_out = [(n, node) for n, node in zip(trace.output_names, trace.flow.outputs)
                  if name_path(n)[:1] == ("params",)]
    loops = [r for r in iter_eqns(trace.jaxpr) if r.primitive == "while" and f"{r.path}|control" in reached]
    if loops:
        loop = loops[0]
        return CheckResult(False, f"The `while` loop{line_hint(loop)} runs a number of steps that depends on "
                           "`count` (as `lax.fori_loop(0, count, ...)` does): at step 1,000,000 it runs a million "
                           "times, to compute one power. `b1 ** t` computes the power in one operation for any "
                           "traced `t`.", [loop.evidence("loop whose length is the step")])
    limit = max(TABLE_FLOOR, 2 * _param_entries(trace.args.get("params", [])))
    for atom, ref in _arrays(trace):
        size = prod(atom.get("shape", ()))
        if size > limit:
            where = f"`{ref.primitive}`{line_hint(ref)}" if ref else "a constant captured by your function"
            return CheckResult(False, f"{where} makes an array of shape {tuple(atom['shape'])}, {size} entries, where "
                               f"the parameters have {_param_entries(trace.args.get('params', []))}: a table with an "
                               "entry per step (powers of b1 and b2 indexed by `count`, say). Its size grows with the "
                               "length of training, to read two numbers; compute `1 - b1 ** t` directly.",
                               [ref.evidence(f"array of {size} entries")] if ref else [])
    if params_out and not any(node in reached for _, node in params_out):
        return CheckResult(False, "The new `params` do not depend on `count` at all, so there is no bias correction "
                           "(or it does not reach the update). With t = count + 1, divide the moments by "
                           "`1 - b1 ** t` and `1 - b2 ** t` before the step.")
    uses = [r for r in iter_eqns(trace.jaxpr) if any(n in reached for n in r.out_nodes)
            and r.primitive in ("pow", "exp", "integer_pow", "exp2")]
    return CheckResult(True, "The bias corrections come from the traced `count` in constant time: no loop over the "
                       "steps and no table of them.", [r.evidence("power of the step") for r in uses[:2]])


def no_host_callback(trace: Trace) -> CheckResult:
    return host_callback(
        trace, "The update is computed with JAX's own operations: no host callback and no primitive of your own "
        "feeds the result.",
        "the step leaves the compiled program, a round trip to the host at every training step",
        "Write the update with `jnp` operations inside `jax.tree.map`.")


CHECKS = {
    "leaf-by-leaf": leaf_by_leaf,
    "decoupled-weight-decay": decoupled_weight_decay,
    "bias-correction-from-count": bias_correction_from_count,
    "no-host-callback": no_host_callback,
}
