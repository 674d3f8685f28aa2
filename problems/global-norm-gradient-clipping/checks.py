"""Requirement checks for global-norm-gradient-clipping, read off the traced program.

`one-global-norm` finds the square roots (`sqrt`, `rsqrt`, `pow` by 0.5 or -0.5: JAX's own, never a
look-alike) of one element that every leaf of `grads` reaches: the global norm, however it was summed
(per-leaf sums, a concatenated vector, per-leaf norms squared again). Then, exactly:

- with those roots blocked, the data flow from the leaves (``Flow.origins``, at the granularity of arrays)
  must reach each returned leaf only from its own place: any other path between leaves (a concatenation
  the clipped leaves are cut from, a norm computed without a root) goes around the norm;
- where the traced shape was probed (its case is clipped, see cases.py), every returned leaf must move when
  the norm is replaced by other values: a norm that is computed and then discarded, multiplied by zero or
  used for nothing but the return value does not clip.

`no-host-callback`: nothing feeding the result is a host callback or a primitive the submission defined.
"""
import re

from grader.toolkit import (MIXED, CheckResult, EqnRef, Trace, carries, dotted, host_callback, iter_eqns, line_hint,
                            meeting_point, name_path, place_labels)

ROOTS = {"sqrt", "rsqrt", "pow"}
MAX_CANDIDATES = 16
"""Roots reached by several leaves that are tested as the global norm (one backward pass each)."""


def _labels(trace: Trace) -> dict:
    return place_labels(trace, ("grads",))


def _returned(trace: Trace, places: set) -> list[tuple[str, str, tuple]]:
    out = []
    for name, node in zip(trace.output_names, trace.flow.outputs):
        path = name_path(name)
        if path[:1] == ("grads",) and path[1:] in places and node is not None:
            out.append((name, node, path[1:]))
    return out


def _is_root(ref: EqnRef) -> bool:
    """A square root of one element: `sqrt`, `rsqrt`, or `pow` by a literal 0.5 or -0.5."""
    if ref.primitive not in ROOTS or any(max(1, _size(o)) != 1 for o in ref.eqn["outvars"]):
        return False
    if ref.primitive != "pow":
        return True
    exponent = ref.eqn["invars"][1] if len(ref.eqn["invars"]) > 1 else {}
    found = re.search(r"-?\d+(\.\d*)?(e-?\d+)?", exponent.get("lit", ""))
    return bool(found) and abs(abs(float(found.group(0))) - 0.5) < 1e-12


def _size(atom: dict) -> int:
    size = 1
    for d in atom.get("shape", ()):
        size *= int(d)
    return size


def one_global_norm(trace: Trace) -> CheckResult:
    labels = _labels(trace)
    places = set(labels.values())
    returned = _returned(trace, places)
    if not returned:
        shown = ", ".join(f"`{n}`" for n in trace.output_names[:4]) or "nothing"
        return CheckResult(False, f"None of the returned leaves is a leaf of `grads` at a place the input has (the "
                           f"grader found {shown}). Return `{{\"grads\": clipped, \"global_norm\": norm}}`, "
                           "with `clipped` of the same structure as the input.")
    origin = trace.flow.origins(labels)
    roots = [r for r in iter_eqns(trace.jaxpr) if _is_root(r)]
    several = [r for r in roots if any(origin.get(n) == MIXED or (len(places) == 1 and origin.get(n) is not None)
                                       for n in r.out_nodes)][:MAX_CANDIDATES]
    norms = [r for r in several if set(labels) <= trace.flow.sources_of(r.out_nodes)]
    if not norms:
        fake = [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")]
        if fake:
            return CheckResult(False, f"`{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code "
                               "defined itself, not JAX's, and no square root of JAX's own takes in every leaf. "
                               "Compute the norm with `jnp.sqrt` of the sum of every leaf's squares.",
                               [r.evidence("not a JAX primitive") for r in fake[:3]])
        own = [r for r in roots if any(origin.get(n) not in (None, MIXED) for n in r.out_nodes)]
        if len(own) > 1 or (own and len(places) > 1):
            return CheckResult(False, f"The program takes {len(own)} square root(s), e.g. `{own[0].primitive}`"
                               f"{line_hint(own[0])}, each of one leaf's values only: a norm per leaf. Global "
                               "clipping takes one norm of all the leaves together, "
                               "`jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))`, and scales "
                               "every leaf by the same factor.", [r.evidence("norm of one leaf") for r in own[:4]])
        return CheckResult(False, f"No square root (`jnp.sqrt`, `jnp.linalg.norm`, `** 0.5`, `lax.rsqrt`) of all "
                           f"{len(places)} leaves together was found in the traced program. Compute the global "
                           "norm as the square root of the sum of every leaf's squares, and clip through it.")
    blocked = [n for r in norms for n in r.out_nodes]
    around = trace.flow.origins(labels, blocked)
    crossing = [(name, node, place) for name, node, place in returned if around.get(node) not in (None, place)]
    norm = norms[0]
    if crossing:
        name, node, place = crossing[0]
        meet = meeting_point(trace, around)
        where = f" They meet at `{meet.primitive.split(':')[-1]}`{line_hint(meet)}." if meet else ""
        evidence = [norm.evidence("the global norm")] + ([meet.evidence("leaves meet here, around the norm")]
                                                          if meet else [])
        return CheckResult(False, f"`{name}` is also computed from arrays that hold values of other leaves of `grads`, "
                           f"by a path that does not go through the global norm `{norm.primitive}`{line_hint(norm)}."
                           f"{where} "
                           f"{len(crossing)} of the {len(returned)} returned leaves are. Apart from the norm, "
                           f"each clipped leaf needs only its own gradient, `{dotted(('grads',) + place)}`: scale "
                           "the leaves with `jax.tree.map`, rather than clipping one concatenated vector or "
                           "computing the norm a second way.", evidence)
    moved, measured, unknown = set(), False, ""
    for ref in norms:
        carry = carries(trace, ref, outputs=["grads"], what="the global norm")
        if carry.unknown:
            unknown = unknown or carry.message()
            continue
        if carry.measured:
            measured = True
            moved |= set(carry.outputs) - set(carry.still)
    names = [name for name, _, _ in returned]
    if measured:
        still = [n for n in names if n not in moved]
        own = [r for r in roots if any(origin.get(n) not in (None, MIXED) for n in r.out_nodes)]
        per_leaf = (f" The program takes {len(own)} square root(s) of one leaf each instead, e.g. "
                    f"`{own[0].primitive}`{line_hint(own[0])}: a norm per leaf, where global clipping scales every "
                    "leaf by one factor." if own and len(places) > 1 else "")
        if still and len(still) == len(names):
            return CheckResult(False, f"The global norm `{norm.primitive}`{line_hint(norm)} does not clip: when the "
                               "grader replaced it with other values on a case that must be clipped, no returned "
                               "leaf of `grads` changed (the norm is only returned, or discarded, multiplied by "
                               "zero or selected away)." + per_leaf + " Scale the clipped leaves by the global norm: "
                               "`g / norm * max_norm`.",
                               [norm.evidence("norm that does not clip")]
                               + [r.evidence("norm of one leaf") for r in own[:3]])
        if still:
            shown = ", ".join(f"`{n}`" for n in still[:4])
            return CheckResult(False, f"{shown} did not change when the grader replaced the global norm "
                               f"`{norm.primitive}`{line_hint(norm)} with other values on a case that must be "
                               "clipped: every leaf must be scaled by the same factor, `max_norm / norm`.",
                               [norm.evidence("the global norm")])
    elif unknown:
        return CheckResult(False, unknown, [norm.evidence("the global norm")])
    return CheckResult(True, f"One global norm, `{norm.primitive}`{line_hint(norm)} of all {len(places)} leaves, and "
                       f"each of the {len(returned)} returned leaves is scaled through it from its own gradient "
                       "alone.", [r.evidence("the global norm") for r in norms[:3]])


def no_host_callback(trace: Trace) -> CheckResult:
    return host_callback(
        trace, "The choice to clip is made inside the program: no host callback and no primitive of your own feeds "
        "the result.",
        "the clipping decision leaves the compiled program, a round trip to the host at every training step",
        "Decide inside the program: `jnp.where(norm < max_norm, g, g / norm * max_norm)`.")


CHECKS = {
    "one-global-norm": one_global_norm,
    "no-host-callback": no_host_callback,
}
