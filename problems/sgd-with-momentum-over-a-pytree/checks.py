"""Requirement checks for sgd-with-momentum-over-a-pytree, read off the traced program.

`jax.tree.map` leaves no equation of its own: what it leaves is a program in which every result leaf is
computed from the input leaves at its own place in the trees. That is what `leaf-by-leaf` checks, exactly,
at the granularity of arrays: the input leaves are labelled with their place (``Flow.origins``), and a
returned leaf computed from an array that holds values of another place (a concatenation of the leaves,
even where the slice taken back holds only its own values; a sum over leaves, even multiplied by zero)
fails. Code that
assumes the trees' keys cannot be seen in the program at all; the hidden cases, whose trees nest dicts and
lists differently, catch it. `no-host-callback` asks that nothing feeding the result is work the grader
cannot see: a host callback or a primitive the submission defined.
"""
from grader.dataflow import MIXED
from grader.jaxpr_tools import CheckResult, Trace, line_hint, name_path, opaque_sources

TREES = ("params", "grads", "velocity")
"""Arguments whose leaves have a place; `lr` and `momentum` may reach every leaf."""
RETURNED = ("params", "velocity")


def dotted(path: tuple) -> str:
    """``("params", "layers", 0, "w")`` -> ``params.layers[0].w``, as the returned values are named."""
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(path))


def _meeting_point(trace: Trace, found: dict) -> str:
    """Where leaves of different places first meet: the first equation whose result is MIXED."""
    for path, ref in trace.eqn_at.items():
        if any(found.get(n) == MIXED for n in ref.out_nodes):
            return f"`{ref.primitive.split(':')[-1]}`{line_hint(ref)}"
    return ""


def leaf_by_leaf(trace: Trace) -> CheckResult:
    labels = {node: name_path(name)[1:] for node, name in zip(trace.flow.inputs, trace.input_names)
              if node is not None and name_path(name)[:1] and name_path(name)[0] in TREES}
    places = set(labels.values())
    found = trace.flow.origins(labels)
    checked, elsewhere, wrong, made = 0, 0, [], []
    for name, node in zip(trace.output_names, trace.flow.outputs):
        path = name_path(name)
        if not path or path[0] not in RETURNED:
            continue
        if path[1:] not in places:
            elsewhere += 1
            continue
        checked += 1
        if node in trace.flow.made_by and len(made) < 4:
            made.append(trace.eqn_at[trace.flow.made_by[node][0]].evidence(f"computes `{name}`"))
        got = found.get(node)
        if got is not None and got != path[1:]:
            wrong.append((name, node, got))
    if not checked:
        shown = ", ".join(f"`{n}`" for n in trace.output_names[:4]) or "nothing"
        return CheckResult(False, "None of the returned leaves sits at a place the input trees have (the grader "
                           f"found {shown}), so it could not match them with the inputs. Return "
                           "`{\"params\": new_params, \"velocity\": new_velocity}`, each with the structure of "
                           "`params`; a function that returns a tuple inside `jax.tree.map` gives a tree of "
                           "tuples, so map once for each tree instead.")
    if wrong:
        name, node, got = wrong[0]
        sources = trace.flow.sources_of([node])
        place = name_path(name)[1:]
        others = sorted({dotted(name_path(n)) for n, inp in zip(trace.input_names, trace.flow.inputs)
                         if inp in sources and name_path(n)[:1]
                         and name_path(n)[0] in TREES and name_path(n)[1:] != place})
        own = ", ".join(f"`{dotted((tree,) + place)}`" for tree in TREES)
        shown = ", ".join(f"`{o}`" for o in others[:4]) + (", ..." if len(others) > 4 else "")
        where = _meeting_point(trace, found)
        met = f" They meet at {where}." if where else ""
        return CheckResult(False, f"`{name}` is computed from arrays that also hold values of leaves at other places "
                           f"({shown}), not only from {own}."
                           f"{met} {len(wrong)} of the {checked} returned leaves are. Each "
                           "leaf's update needs only its own leaves: map it over the trees with "
                           "`jax.tree.map(f, velocity, grads)` instead of flattening them into one vector or "
                           "combining leaves.")
    extra = (f" ({elsewhere} other returned leaves sit at places the input trees do not have; the test cases "
             "report the structure.)" if elsewhere else "")
    return CheckResult(True, f"Each of the {checked} returned leaves at the inputs' places is computed from the "
                       f"leaves at its own place in `params`, `grads` and `velocity`.{extra}", made)


def no_host_callback(trace: Trace) -> CheckResult:
    found = opaque_sources(trace)
    if not found:
        return CheckResult(True, "The update is computed with JAX's own operations: no host callback and no "
                           "primitive of your own feeds the result.")
    ref = found[0]
    if ref.primitive.startswith("foreign:"):
        what = (f"`{ref.primitive[8:]}`{line_hint(ref)} is a primitive your code defined itself, not one of "
                "JAX's, and its results flow into the returned values; the grader cannot see what it computes.")
    else:
        what = (f"`{ref.primitive}`{line_hint(ref)} hands values to Python on the host, and its results flow "
                "into the returned values: the update leaves the compiled program (a round trip to the host "
                "at every step, on an accelerator a device-to-host copy).")
    return CheckResult(False, what + " Write the update with `jnp` operations on the leaves, inside "
                       "`jax.tree.map`.", [r.evidence("feeds the result from outside JAX") for r in found[:4]])


CHECKS = {
    "leaf-by-leaf": leaf_by_leaf,
    "no-host-callback": no_host_callback,
}
