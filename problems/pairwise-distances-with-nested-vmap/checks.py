"""Requirement checks for pairwise-distances-with-nested-vmap, read off the traced program.

`jax.vmap` leaves no equation of its own: `jax.vmap(jax.vmap(distance))(x, y)` traces to the very
broadcast-subtract-square-sum-sqrt that `x[:, None] - y[None]` written by hand gives. What differs is who
made the equations: JAX records on each one the entry points that were running (``EqnRef.api_chain``,
recognised by code object, so a function merely named `vmap` does not count), and inside two vmaps that
is ``["vmap", "vmap"]``.

That makes "the nested vmap carries the answer" an exact data-flow fact rather than a probe: the result
depends on both `x` and `y`, so some operation combines them; if every operation whose result depends on
both was made inside two vmaps (after them only reshapes and transposes), nothing computes the distances
around the vmaps. A vmapped distance that is discarded, multiplied by zero or selected away next to a
hand-written broadcast leaves the hand-written equations outside the vmaps, where this finds them. A host
callback under the vmaps (`vmap_method="broadcast_all"` hands it every pair at once) computes the distances
outside JAX: nothing it returns may reach the result (``grader.toolkit.host_callback``).
"""
from math import prod

from grader.toolkit import CheckResult, EqnRef, Trace, find, host_callback, iter_eqns, line_hint, node

MOVE = {"reshape", "transpose", "squeeze", "expand_dims", "copy", "copy_p", "convert_element_type"}
"""Operations that only move the result, allowed after the vmaps (a transpose of an (M, N) result)."""
JOIN = {"concatenate", "stack"}
"""Joining pieces is not spreading one array over more numbers (a loop's pieces fail `nested-vmap`)."""
LOOKUP = {"gather", "dynamic_slice", "dynamic_index_in_dim"}
"""Indexing by position: inside the vmaps, a lookup into a table already computed from `x` and `y`."""
ONE_PAIR = "`jax.vmap(jax.vmap(distance, in_axes=(None, 0)), in_axes=(0, None))(x, y)`"


def _depth(ref: EqnRef) -> int:
    """How many `jax.vmap` calls were running around the equation when JAX made it."""
    return ref.api_chain.count("vmap")


def _where(ref: EqnRef) -> str:
    return f"`{ref.primitive.split(':', 1)[-1]}`{line_hint(ref)}"


def _reach(trace: Trace) -> tuple[set, set]:
    return trace.flow.reach(trace.inputs("x")), trace.flow.reach(trace.inputs("y"))


def _foreign(ref: EqnRef) -> CheckResult:
    return CheckResult(False, f"`{ref.primitive[8:]}`{line_hint(ref)} is a primitive your code defined itself, not "
                       "one of JAX's, so the grader cannot tell what it computes. Compute the distance with "
                       f"`jax.numpy` in a function of one pair and map it with {ONE_PAIR}.",
                       [ref.evidence("not a JAX primitive")])


def nested_vmap(trace: Trace) -> CheckResult:
    from_x, from_y = _reach(trace)
    both = from_x & from_y
    if not trace.flow.outputs or trace.flow.outputs[0] not in both:
        return CheckResult(False, "The result does not depend on both `x` and `y`, so no distance between their "
                           f"rows is computed. Map the distance of one pair with {ONE_PAIR}.")
    inside, outside, lookups = [], [], []
    for r in iter_eqns(trace.jaxpr):
        if not any(n in both for n in r.out_nodes):
            continue
        if r.primitive.startswith("foreign:"):
            return _foreign(r)
        if r.eqn["subjaxprs"]:
            continue  # a jit, scan or branch: the equations inside it are judged one by one
        if _depth(r) >= 2:
            inside.append(r)
            table = node(r.scope, r.eqn["invars"][0]) if r.eqn["invars"] else None
            if r.primitive in LOOKUP and table in both:
                lookups.append(r)
        elif r.primitive not in MOVE:
            outside.append(r)
    if outside:
        first = outside[0]
        copies = {}
        for r in outside:
            copies[(r.primitive, r.eqn.get("source_line"))] = copies.get((r.primitive, r.eqn.get("source_line")), 0) + 1
        repeated = max(copies.values())
        evidence = [r.evidence(f"depends on x and y, inside {_depth(r)} vmap(s)") for r in outside[:4]]
        loops = [a for a in first.ancestors if a.primitive in {"scan", "while"}]
        if loops:
            how = (f" It runs inside a `{loops[-1].primitive}` loop{line_hint(loops[-1])} (what `lax.map` or "
                   "`fori_loop` make), which walks the rows one at a time.")
        elif repeated > 1:
            how = (f" The program holds {repeated} copies of it, one per row or pair: a Python loop unrolls into "
                   "the trace, and its pieces are joined outside the vmaps.")
        else:
            how = ""
        if not inside:
            where = ("inside only one `jax.vmap`" if _depth(first) == 1 else "outside any `jax.vmap`")
            return CheckResult(False, f"{_where(first)} works on data from both `x` and `y` {where}, and no part "
                               "of the distance "
                               f"runs inside two nested vmaps.{how} Write `distance(a, b)` for one pair of rows and "
                               f"map it with {ONE_PAIR}.", evidence)
        step = (" Keep the whole distance, square root included, inside the function you map."
                if first.primitive in {"sqrt", "rsqrt", "pow", "integer_pow"} else
                " An answer computed beside the vmaps, or added to their result, does not count: return what "
                "the two vmaps compute (a reshape or transpose afterwards is fine).")
        return CheckResult(False, f"Part of the distances is computed inside two nested vmaps, but {_where(first)} "
                           "works on data from both `x` and `y` outside them (inside "
                           f"{'only one vmap' if _depth(first) == 1 else 'no vmap'})."
                           + how + step, evidence + [inside[0].evidence("inside two vmaps")])
    if lookups:
        first = lookups[0]
        return CheckResult(False, f"Inside the two vmaps, {_where(first)} looks numbers up by position in an array "
                           "that is already computed from both `x` and `y`: the rows are paired by hand, and the "
                           "vmaps only pick entries. The mapped function must compute the distance from the two "
                           "rows it is handed.", [r.evidence("lookup into a table of pairs") for r in lookups[:3]])
    hosted = host_callback(trace, "", "the distances are computed by Python on the host (a callback under `vmap` "
                           "is handed the whole batch at once), not by the function the vmaps map",
                           "Write `distance(a, b)` with JAX's own operations: `jnp.sqrt(jnp.sum((a - b) ** 2))`.")
    if not hosted.passed:
        return hosted
    return CheckResult(True, f"All {len(inside)} operations that combine `x` and `y` run inside two nested "
                       f"`jax.vmap` calls (e.g. {_where(inside[0])}).",
                       [r.evidence("inside two vmaps") for r in inside[:3]])


def all_pairs_at_once(trace: Trace) -> CheckResult:
    """Decided by the program alone (no label read): every operation whose result depends on both `x` and
    `y` holds at least one number per pair (N x M of them), so no row or pair is computed as a piece of its own
    and joined afterwards (what a Python loop unrolls into); no host callback and no primitive of the
    submission's own computes them. Two nested vmaps pass, and so does the broadcast they trace to."""
    from_x, from_y = _reach(trace)
    both = from_x & from_y
    outs = trace.jaxpr.get("outvars") or []
    if not trace.flow.outputs or trace.flow.outputs[0] not in both or not outs:
        return CheckResult(False, "The result does not depend on both `x` and `y`, so no distance between their "
                           f"rows is computed. Map the distance of one pair with {ONE_PAIR}.")
    pairs = prod(outs[0]["shape"])
    pieces = []
    for r in iter_eqns(trace.jaxpr):
        if not any(n in both for n in r.out_nodes):
            continue
        if r.primitive.startswith("foreign:"):
            return _foreign(r)
        if r.eqn["subjaxprs"] or r.primitive in MOVE or not r.eqn["outvars"]:
            continue  # a jit, scan or branch: the equations inside it are judged one by one
        if any(a.primitive in {"scan", "while"} for a in r.ancestors):
            continue  # a loop's body works a piece at a time by design: that is no-loop's to say
        if max(prod(o["shape"]) for o in r.eqn["outvars"]) < pairs:
            pieces.append(r)
    if pieces:
        first = pieces[0]
        copies: dict = {}
        for r in pieces:
            copies[(r.primitive, r.eqn.get("source_line"))] = copies.get((r.primitive, r.eqn.get("source_line")), 0) + 1
        repeated = max(copies.values())
        size = max(prod(o["shape"]) for o in first.eqn["outvars"])
        how = (f" The program holds {repeated} copies of it, one per row or pair: a Python loop unrolls into the "
               "trace, and its pieces are joined afterwards." if repeated > 1 else "")
        return CheckResult(False, f"{_where(first)} combines `x` and `y` into {size} number(s), fewer than the "
                           f"{pairs} pairs: part of the distances is computed a row or a pair at a time.{how} Write "
                           f"`distance(a, b)` for one pair of rows and map it with {ONE_PAIR}, which computes every "
                           "pair at once.", [r.evidence(f"{max(prod(o['shape']) for o in r.eqn['outvars'])} numbers "
                                                        f"from x and y, fewer than {pairs} pairs")
                                             for r in pieces[:4]])
    hosted = host_callback(trace, "", "the distances are computed by Python on the host, not by JAX operations the "
                           "grader can read", "Write `distance(a, b)` with JAX's own operations: "
                           "`jnp.sqrt(jnp.sum((a - b) ** 2))`.")
    if not hosted.passed:
        return hosted
    return CheckResult(True, f"Every operation that combines `x` and `y` works on all {pairs} pairs at once (the "
                       "program `jax.vmap` traces to), none on a row or a pair of its own.")


def no_hand_broadcast(trace: Trace) -> CheckResult:
    from_x, from_y = _reach(trace)
    data = from_x | from_y
    for r in iter_eqns(trace.jaxpr):
        if _depth(r) >= 2 or r.primitive in JOIN or (r.eqn["subjaxprs"] and not r.primitive.startswith("foreign:")):
            continue
        sizes = [prod(a["shape"]) for a in r.eqn["invars"] if node(r.scope, a) in data]
        if not sizes or not r.eqn["outvars"]:
            continue
        big = max(r.eqn["outvars"], key=lambda o: prod(o["shape"]))
        if prod(big["shape"]) <= max(sizes):
            continue
        if r.primitive.startswith("foreign:"):
            return _foreign(r)
        source = " and ".join(n for n, s in (("`x`", from_x), ("`y`", from_y)) if any(
            node(r.scope, a) in s for a in r.eqn["invars"]))
        return CheckResult(False, f"Outside the vmaps, {_where(r)} turns data from {source} (at most {max(sizes)} "
                           f"numbers) into an array of shape {tuple(big['shape'])} ({prod(big['shape'])} numbers): "
                           "that pairs the rows by hand, the work the vmaps are there to do. Hand `x` and `y` to "
                           f"the vmaps as they are, {ONE_PAIR}, and let them broadcast.",
                           [r.evidence(f"spreads data to shape {tuple(big['shape'])}")])
    return CheckResult(True, "Outside the vmaps, no operation spreads `x` or `y` over more numbers than it had.")


def no_loop(trace: Trace) -> CheckResult:
    loops = find(trace.jaxpr, {"scan", "while"})
    if loops:
        first = loops[0]
        steps = first.params.get("length")
        what = (f"a `scan` of {steps} step(s)" if first.primitive == "scan" else "a `while` loop")
        fix = ("sum the D squares with `jnp.sum`, not a loop" if _depth(first) >= 2 else
               "map the rows with `jax.vmap`, which computes every pair at once")
        return CheckResult(False, f"The traced program contains {what}{line_hint(first)}: `lax.map`, `lax.scan` "
                           "and `lax.fori_loop` become a `scan`, `lax.while_loop` a `while`, and either walks its "
                           f"steps one after another. Use no loop: {fix}.", [r.evidence("loop") for r in loops[:3]])
    return CheckResult(True, "The traced program contains no `scan` or `while` loop.")


CHECKS = {
    "nested-vmap": nested_vmap,
    "no-hand-broadcast": no_hand_broadcast,
    "all-pairs-at-once": all_pairs_at_once,
    "no-loop": no_loop,
}
