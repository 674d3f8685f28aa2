"""Requirement checks for ring-all-reduce-with-ppermute, read off the traced program.

The child runs every shard_map body for every device (``grader/learner/jaxpr_numpy.py``) and probes each ppermute in
it on all devices at once, so "this ppermute carries the sums" is measured, not guessed.

- **shard-map-rows**: a `shard_map` (JAX's own; `jax.pmap` traces to one) must carry every output, with no
  path from `x` around it; its mesh has n devices, and every operand computed from `x` reaches it as `x`
  itself (reshapes and layout changes only) split by rows over the whole mesh, so no device holds another's
  row: the only way a row can travel is then a collective in the body.
- **ring-of-ppermutes**: the ppermutes in that body (JAX's own) each shift every device's block by one place
  around the mesh axis, all in the same direction; they run n - 1 times in all (a ppermute inside a scan
  counts once per step); each carries the outputs (probed).
- **no-shortcut**: no collective but ppermute, no host callback and no primitive of the submission's own
  (which could hide one) anywhere in the program.
"""
from __future__ import annotations

import ast
from math import prod

from grader.toolkit import (HOST_CALLBACKS, CheckResult, EqnRef, Node, Trace, body_eqns, carries, find, iter_eqns,
                            line_hint, node)

COLLECTIVES = {"psum", "psum_invariant", "pmean", "pmax", "pmin", "all_gather", "all_gather_invariant",
               "all_gather_reduced", "reduce_scatter", "all_to_all", "ragged_all_to_all", "pbroadcast",
               "psum_start", "psum_done", "all_gather_start", "all_gather_done", "reduce_scatter_start",
               "reduce_scatter_done", "all_to_all_start", "all_to_all_done", "pbroadcast_start",
               "pbroadcast_done", "psum_invariant_start", "psend", "precv", "unreduced_psum",
               "unreduced_reduce_scatter", "preduced"}
"""JAX's own collectives other than ppermute (``jax/_src/lax/parallel.py``)."""
CALLBACKS = HOST_CALLBACKS
LAYOUT = {"reshape", "convert_element_type", "copy", "copy_p", "squeeze", "expand_dims", "device_put",
          "sharding_constraint", "reshard", "mesh_cast", "pvary", "jit", "pjit"}
"""Operations that hand `x` to the shard_map unchanged in content (its rows stay rows)."""
PPERMUTE = {"ppermute"}


def _n(trace: Trace) -> int:
    return int(trace.args["x"][0])


def _reaches_outputs(trace: Trace, ref: EqnRef) -> bool:
    return bool(trace.flow.outputs_reached(ref.out_nodes))


def _mesh(ref: EqnRef) -> dict | None:
    mesh = ref.params.get("mesh")
    return mesh if isinstance(mesh, dict) and "axis_names" in mesh else None


def _specs(ref: EqnRef, key: str) -> list[list]:
    specs = ref.params.get(key)
    return [s.get("spec", []) for s in specs] if isinstance(specs, list) else []


def _axes(entry) -> tuple[str, ...]:
    return () if entry is None else tuple(entry) if isinstance(entry, list) else (entry,)


def _literal(value):
    try:
        return ast.literal_eval(value) if isinstance(value, str) else value
    except (ValueError, SyntaxError):
        return None


def _origin_is_x(trace: Trace, start: Node, x_nodes: set[Node]) -> bool:
    """Whether ``start`` is `x` itself, reached backwards through layout operations only."""
    flow = trace.flow
    seen, todo = set(), [start]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        if n in x_nodes:
            continue
        made = flow.made_by.get(n)
        if made is None:
            back = flow.back.get(n, [])
            if not back:
                return False
            todo.extend(back)  # a sub-program's input: follow it to the operand outside
            continue
        path, eqn = made
        if eqn["primitive"] not in LAYOUT:
            return False
        if eqn["subjaxprs"]:
            todo.extend(flow.back.get(n, []))
        else:
            todo.extend(m for m in trace.eqn_at[path].in_nodes)
    return True


def _shard_maps(trace: Trace) -> list[EqnRef]:
    return [s for s in find(trace.jaxpr, {"shard_map"}) if _reaches_outputs(trace, s)]


def _the_shard_map(trace: Trace) -> tuple[EqnRef | None, CheckResult | None]:
    maps = _shard_maps(trace)
    if not maps:
        fake = [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:") and _reaches_outputs(trace, r)]
        seen = (f" `{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code defined itself, not JAX's."
                if fake else "")
        return None, CheckResult(False, "No `jax.shard_map` (or `jax.pmap`) computes the result." + seen + " Run the "
                                 "ring inside `jax.shard_map(per_device, mesh=mesh, in_specs=P(axis), "
                                 "out_specs=P(axis))`.", [r.evidence("") for r in fake[:2]])
    if len(maps) > 1:
        return None, CheckResult(False, f"{len(maps)} `shard_map`s compute the result, not one: run the whole ring "
                                 "inside a single `jax.shard_map`.", [m.evidence("shard_map") for m in maps[:3]])
    return maps[0], None


def shard_map_rows(trace: Trace) -> CheckResult:
    n = _n(trace)
    sm, problem = _the_shard_map(trace)
    if problem:
        return problem
    mesh = _mesh(sm)
    if mesh is None:
        return CheckResult(False, f"The grader could not read the mesh of the shard_map{line_hint(sm)}.",
                           [sm.evidence("shard_map")])
    sizes = dict(zip(mesh["axis_names"], mesh["axis_sizes"]))
    devices = prod(sizes.values())
    if devices != n:
        return CheckResult(False, f"The shard_map{line_hint(sm)} runs on a mesh of {devices} device(s), but x has "
                           f"n = {n} rows: use `jax.devices()[:n]`, one device per row.", [sm.evidence("mesh")])
    x_nodes = set(trace.inputs("x"))
    from_x = trace.flow.reach(x_nodes)
    specs = _specs(sm, "in_specs")
    operands = sm.eqn["invars"]
    for k, atom in enumerate(operands):
        op = node(sm.scope, atom)
        if op is None or op not in from_x:
            continue
        spec = specs[k] if k < len(specs) else None
        shape = tuple(atom["shape"])
        if spec is None:
            return CheckResult(False, f"The grader could not read the in_specs of the shard_map{line_hint(sm)}.",
                               [sm.evidence("shard_map")])
        first = _axes(spec[0]) if spec else ()
        rest = [a for entry in spec[1:] for a in _axes(entry)]
        if not first or prod(sizes[a] for a in first) != n or rest or not shape or shape[0] != n:
            how = ("is replicated: every device sees all rows" if not first and not rest else
                   f"is split as P{tuple(spec)}, not by rows over all {n} devices")
            return CheckResult(False, f"Operand {k} of the shard_map{line_hint(sm)} comes from `x` (shape {shape}) "
                               f"and {how}. Pass `x` with `in_specs=P(axis)`, so that device i holds row i only; "
                               "otherwise a device can sum rows it was never sent.", [sm.evidence("in_specs")])
        if not _origin_is_x(trace, op, x_nodes):
            return CheckResult(False, f"Operand {k} of the shard_map{line_hint(sm)} is computed from `x` before the "
                               "shard_map (more than a reshape), so the devices do not start from their own rows. "
                               "Hand `x` itself to the shard_map.", [sm.evidence("operand computed from x")])
    carry = carries(trace, sm, around_from=("x",), what="the shard_map")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return what the shard_map computes.",
                           [sm.evidence("shard_map that does not carry the answer")] + carry.around_evidence)
    after = _computed_after(trace, sm)
    if after:
        first = after[0]
        return CheckResult(False, f"The shard_map{line_hint(sm)} hands back blocks that are combined after it: "
                           f"`{first.primitive}`{line_hint(first)} computes on its results outside the devices' ring, "
                           "so the sum is not the ring's. Let each device add what the ring passes it, and return "
                           "the shard_map's result as it is (a reshape afterwards is fine).",
                           [first.evidence("computed after the shard_map")])
    return CheckResult(True, f"One `shard_map` over {n} devices{line_hint(sm)}, each holding its own row of `x`, "
                       "computes the result, and nothing is computed from it afterwards.", [sm.evidence("shard_map")])


AFTER_OK = {"reshape", "transpose", "squeeze", "expand_dims", "copy", "copy_p", "convert_element_type",
            "broadcast_in_dim", "slice", "dynamic_slice", "gather", "device_put", "sharding_constraint"}
"""What may happen to the shard_map's result before it is returned: moving and selecting, never arithmetic."""


def _computed_after(trace: Trace, sm: EqnRef) -> list[EqnRef]:
    """Equations outside the shard_map that compute (add, reduce, multiply...) on its results on the way to the
    returned rows (the rule's "nothing summed outside it", read on the program's data flow)."""
    downstream = trace.flow.reach(sm.out_nodes)
    to_outputs = trace.flow.sources_of(trace.flow.outputs)
    inside = {id(r) for r in iter_eqns(trace.jaxpr) if any(a is sm for a in r.ancestors)}
    return [r for r in iter_eqns(trace.jaxpr) if r is not sm and id(r) not in inside
            and not r.eqn["subjaxprs"] and r.primitive not in AFTER_OK
            and any(n in downstream and n in to_outputs for n in r.out_nodes)]


def _executions(ppermute: EqnRef, sm: EqnRef) -> int | None:
    """How many times ``ppermute`` runs per call of ``sm``: the product of the lengths of the scans around it
    inside ``sm``, None under a while loop or a cond."""
    chain = ppermute.ancestors
    inside = chain[chain.index(sm) + 1:] if sm in chain else chain
    count = 1
    for a in inside:
        if a.primitive == "scan":
            count *= int(a.params.get("length") or 0)
        elif a.primitive in ("while", "cond"):
            return None
    return count


def _steps(k: int, word: str = "step") -> str:
    return f"{k} {word}{'' if k == 1 else 's'}"


def ring_of_ppermutes(trace: Trace) -> CheckResult:
    n = _n(trace)
    sm, problem = _the_shard_map(trace)
    if problem:
        return CheckResult(False, "There is no shard_map for a ring to run in: " + problem.message[:1].lower()
                           + problem.message[1:], problem.evidence)
    mesh = _mesh(sm) or {"axis_names": [], "axis_sizes": []}
    sizes = dict(zip(mesh["axis_names"], mesh["axis_sizes"]))
    perms = [e for e in body_eqns(sm) if e.primitive in PPERMUTE]
    if not perms:
        fake = [e for e in body_eqns(sm) if e.primitive.startswith("foreign:")]
        seen = (f" `{fake[0].primitive[8:]}`{line_hint(fake[0])} is a primitive your code defined itself, not "
                "JAX's." if fake else "")
        return CheckResult(False, f"The shard_map{line_hint(sm)} holds no `jax.lax.ppermute`." + seen + " Pass each "
                           "device's block to its neighbour with `jax.lax.ppermute(block, axis, perm)`.",
                           [sm.evidence("shard_map")])
    directions = set()
    for p in perms:
        axes = _literal(p.params.get("axis_name"))
        axes = tuple(axes) if isinstance(axes, (tuple, list)) else (axes,)
        pairs = _literal(p.params.get("perm"))
        size = prod(sizes.get(a, 0) for a in axes)
        if size != n or not isinstance(pairs, (tuple, list)):
            return CheckResult(False, f"The ppermute{line_hint(p)} runs over the mesh axes {axes} of {size} "
                               f"device(s), not a ring of all n = {n}.", [p.evidence("ppermute")])
        pairs = {(int(a), int(b)) for a, b in pairs}
        right = {(i, (i + 1) % n) for i in range(n)}
        left = {(i, (i - 1) % n) for i in range(n)}
        if pairs not in (right, left):
            shown = ", ".join(f"({a}, {b})" for a, b in sorted(pairs)[:6])
            return CheckResult(False, f"The ppermute{line_hint(p)} sends along the pairs [{shown}], which is not one "
                               f"step around the ring of {n} devices: every device must send to its right "
                               f"neighbour, [(i, (i + 1) % n)], or every device to its left.",
                               [p.evidence("ppermute that is not a ring step")])
        directions.add("right" if pairs == right else "left")
    if len(directions) > 1:
        return CheckResult(False, "Some ppermutes send to the right and others to the left: a ring passes every "
                           "block the same way round, so that after n - 1 steps each device has seen every row "
                           "once.", [p.evidence("ppermute") for p in perms[:4]])
    runs = [(_executions(p, sm), p) for p in perms]
    unknown = [p for c, p in runs if c is None]
    if unknown:
        return CheckResult(False, f"The ppermute{line_hint(unknown[0])} sits in a `while_loop` or a `lax.cond`, so "
                           "the number of ring steps is not fixed in the program. Write the n - 1 steps out, or use "
                           "`jax.lax.fori_loop(0, n - 1, ...)` with Python-int bounds (a scan).",
                           [p.evidence("ppermute") for p in unknown[:3]])
    steps = sum(c for c, _ in runs)
    if steps != n - 1:
        why = (" (If this is the reduce-scatter + all-gather ring, which moves chunks in 2(n - 1) steps: this "
               "problem asks for the simple ring that passes whole rows.)" if steps == 2 * (n - 1) else "")
        return CheckResult(False, f"The ppermutes run {_steps(steps, 'time')} in all, but a ring of n = {n} devices needs "
                           f"exactly n - 1 = {_steps(n - 1)}: after them every row has visited every device once."
                           + why, [p.evidence("ppermute") for p in perms[:4]])
    for p in perms:
        carry = carries(trace, p, what="the ppermute")
        if not carry.ok:
            return CheckResult(False, carry.message() + " Every ring step must deliver the block that is added to "
                               "the running total.", [p.evidence("ppermute that does not carry the sums")])
    where = (f"in a loop of {n - 1} steps{line_hint(perms[0])}" if len(perms) == 1 and n > 2 else
             f"written out{line_hint(perms[0])}")
    return CheckResult(True, f"{_steps(n - 1, 'ppermute step')} to the {directions.pop()} around the ring of {n} devices, "
                       f"{where}, and the sums depend on every one.", [p.evidence("ring step") for p in perms[:4]])


def no_shortcut(trace: Trace) -> CheckResult:
    found = [r for r in iter_eqns(trace.jaxpr) if r.primitive in COLLECTIVES]
    if found:
        r = found[0]
        return CheckResult(False, f"The program calls the collective `{r.primitive}`{line_hint(r)} (what "
                           "`jax.lax.psum`, `pmean`, `all_gather` and friends trace to). It does the all-reduce for "
                           "you; build it from `ppermute` steps alone.", [x.evidence("collective") for x in found[:3]])
    hosts = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CALLBACKS]
    if hosts:
        h = hosts[0]
        return CheckResult(False, f"A host callback (`{h.primitive}`{line_hint(h)}) runs Python outside the traced "
                           "program, where rows can travel between devices unseen. Use `ppermute` only.",
                           [x.evidence("host callback") for x in hosts[:3]])
    fake = [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:") and _reaches_outputs(trace, r)]
    if fake:
        f = fake[0]
        return CheckResult(False, f"`{f.primitive[8:]}`{line_hint(f)} is a primitive your code defined itself: the "
                           "grader cannot see which collectives it runs. Use JAX's own `ppermute`.",
                           [x.evidence("not a JAX primitive") for x in fake[:3]])
    return CheckResult(True, "No collective but `ppermute`, no host callback and no primitive of your own.")


CHECKS = {
    "shard-map-rows": shard_map_rows,
    "ring-of-ppermutes": ring_of_ppermutes,
    "no-shortcut": no_shortcut,
}
