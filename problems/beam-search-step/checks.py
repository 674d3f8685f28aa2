"""Requirement checks for beam-search-step, read off the traced program.

- **one-top-k**: the one `top_k` (JAX's own) that reaches the outputs must run over all K·V candidates
  with k = K, and carry the new scores and tokens (probed: replacing its results moves them; data flow:
  `scores` and `log_probs` reach them only through it). A `sort` that reaches the outputs fails.
- **flat-index-split**: `parents` and `tokens` must come from that top_k's index output (with no such top_k,
  the flat indices of an argsort over all K·V candidates: the row judges the split, not the search), through
  integer operations only (every equation on the way, read off the data flow), with a `div` that carries `parents`
  and a `rem` (or the subtraction `i - V * parent`) that carries `tokens`.
- **finished-by-select**: a `select_n` whose predicate comes from `finished` must feed the top_k's operand
  (with no top_k, whatever ranks the candidates: the row judges the masking, not the search) and carry the
  new scores; no `cond`/`while` and no host callback may read `finished`.
"""
from __future__ import annotations

from grader.toolkit import (CALL, HOST_CALLBACKS, JIT, CheckResult, EqnRef, Node, Trace, carries, find, iter_eqns,
                            line_hint, node, own_scale)

CALLBACKS = HOST_CALLBACKS
WRAPPERS = JIT | CALL
INTEGER_OPS = {"div", "rem", "mul", "add", "sub", "neg", "sign", "abs", "select_n", "eq", "ne", "lt", "gt", "le",
               "ge", "and", "or", "not", "xor", "convert_element_type", "broadcast_in_dim", "reshape", "squeeze",
               "expand_dims", "max", "min", "clamp", "copy", "copy_p", "shift_right_logical",
               "shift_right_arithmetic", "shift_left", "integer_pow", "stop_gradient", "optimization_barrier"}
"""Integer arithmetic (and moving integers around) that may stand between the flat index and parent/token."""
LOOKUPS = {"gather", "dynamic_slice", "dynamic_index_in_dim"}
"""Indexing: a lookup table when the flat index arrives as the *index*, a move when it is the array indexed."""
MOVES = {"slice", "concatenate", "transpose", "rev", "pad"}
RANKS = {"top_k", "sort", "argmax", "argmin", "reduce_max", "reduce_min"}
"""What may rank the candidates: the masking must come before it (finished-by-select)."""
SEARCHES = {"argmax", "argmin", "sort", "top_k", "while", "scan", "cumsum", "cummax", "reduce_sum", "reduce_max"}


def _sizes(trace: Trace) -> tuple[int, int]:
    k, v = trace.args["log_probs"]
    return k, v


def _reaches_outputs(trace: Trace, ref: EqnRef) -> bool:
    return bool(trace.flow.outputs_reached(ref.out_nodes))


def _foreign(trace: Trace) -> list[EqnRef]:
    return [r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:") and _reaches_outputs(trace, r)]


def _axis(ref: EqnRef) -> int:
    shape = ref.eqn["invars"][0]["shape"]
    axis = ref.params.get("axis")
    return len(shape) - 1 if axis is None else int(axis) % max(len(shape), 1)


def _flat_top_k(trace: Trace) -> tuple[EqnRef | None, CheckResult | None]:
    """The one top_k over all K·V candidates with k = K that reaches the outputs, or why there is none."""
    k, v = _sizes(trace)
    live = [t for t in find(trace.jaxpr, {"top_k"}) if _reaches_outputs(trace, t)]
    fake = [r for r in _foreign(trace) if "top" in r.primitive or "sort" in r.primitive]
    if not live:
        if fake:
            return None, CheckResult(False, f"The traced program has no `lax.top_k`: `{fake[0].primitive[8:]}`"
                                     f"{line_hint(fake[0])} is a primitive your code defined itself, not JAX's. Use "
                                     "`jax.lax.top_k`.", [r.evidence("not a JAX primitive") for r in fake[:3]])
        return None, CheckResult(False, "No `jax.lax.top_k` computes the outputs. Flatten the (K, V) candidate "
                                 "scores and take `jax.lax.top_k(candidates.reshape(-1), K)`.")
    if len(live) > 1:
        shapes = ", ".join(str(tuple(t.eqn["invars"][0]["shape"])) for t in live[:4])
        return None, CheckResult(False, f"{len(live)} `top_k`s compute the outputs (operands {shapes}), not one. "
                                 "A top_k per beam followed by another over the survivors does the search twice; "
                                 "flatten all K·V candidates and take one `top_k` of them.",
                                 [t.evidence("top_k") for t in live])
    top = live[0]
    shape = top.eqn["invars"][0]["shape"]
    size = 1
    for d in shape:
        size *= d
    axis = _axis(top)
    kk = top.params.get("k")
    if size != k * v or shape[axis] != k * v:
        per_beam = shape[axis] == v and size == k * v
        why = (f" It searches each beam's {v} candidates separately (a top_k per beam, e.g. under `vmap`), so "
               "a beam with several of the best candidates gets too few." if per_beam else "")
        return None, CheckResult(False, f"The `top_k`{line_hint(top)} runs over an axis of {shape[axis]} entries "
                                 f"of an operand of shape {tuple(shape)}, not over all K·V = {k * v} candidates "
                                 f"(K = {k}, V = {v}).{why} Flatten the (K, V) candidates with `.reshape(-1)` "
                                 "first.", [top.evidence("top_k not over the flattened candidates")])
    if kk != k:
        return None, CheckResult(False, f"The `top_k`{line_hint(top)} keeps k = {kk} candidates, but there are "
                                 f"K = {k} beams: take exactly K.", [top.evidence(f"k = {kk}")])
    return top, None


def one_top_k(trace: Trace) -> CheckResult:
    sorts = [s for s in find(trace.jaxpr, {"sort"}) if _reaches_outputs(trace, s)]
    if sorts:
        s = sorts[0]
        return CheckResult(False, f"A `sort`{line_hint(s)} (what `jnp.sort` and `jnp.argsort` trace to) computes "
                           "the outputs. Sorting orders all K·V candidates to keep K of them; "
                           "`jax.lax.top_k(candidates.reshape(-1), K)` finds just the K best.",
                           [x.evidence("sort") for x in sorts[:3]])
    top, problem = _flat_top_k(trace)
    if problem:
        return problem
    carry = carries(trace, top, outputs=["scores"], around_from=("scores", "log_probs"), what="the top_k")
    tokens = trace.output_index("tokens")
    if carry.ok and not set(tokens) <= set(trace.flow.outputs_reached(top.out_nodes)):
        return CheckResult(False, f"`tokens` is not computed from what the `top_k`{line_hint(top)} picks: take them "
                           "from its flat indices.", [top.evidence("top_k")])
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the values top_k picks as the new scores, and take "
                           "the tokens from its indices.",
                           [top.evidence("top_k that does not carry the answer")] + carry.around_evidence)
    k, v = _sizes(trace)
    return CheckResult(True, f"One `top_k` of k = {k} over the {k * v} flattened candidates{line_hint(top)}, and the "
                       "new scores and tokens come from it.", [top.evidence("top_k over all candidates")])


def _path_eqns(trace: Trace, start: list[Node], outputs: list[int]) -> tuple[list[EqnRef], set[Node]]:
    """Equations on a path from ``start`` to the outputs numbered ``outputs`` (call wrappers left out: the
    equations inside them are on the path themselves), and the path's nodes."""
    flow = trace.flow
    nodes = flow.reach(start) & flow.sources_of([flow.outputs[i] for i in outputs])
    paths = sorted({flow.made_by[n][0] for n in nodes - set(start) if n in flow.made_by})
    return [trace.eqn_at[p] for p in paths if p in trace.eqn_at and trace.eqn_at[p].primitive not in WRAPPERS], nodes


def _first(ref: EqnRef) -> Node | None:
    """The node of an equation's first operand (a select's predicate, a cond's index), None for a literal."""
    return node(ref.scope, ref.eqn["invars"][0]) if ref.eqn["invars"] else None


def _is_integer(ref: EqnRef) -> bool:
    return all(a["dtype"].startswith(("int", "uint", "bool")) for a in ref.eqn["outvars"])


def _over_all_candidates(trace: Trace) -> list[EqnRef]:
    """Live top_ks whose axis holds all K·V candidates (any k)."""
    k, v = _sizes(trace)
    return [t for t in find(trace.jaxpr, {"top_k"}) if _reaches_outputs(trace, t)
            and t.eqn["invars"][0]["shape"][_axis(t)] == k * v]


def _flat_sorts(trace: Trace) -> list[EqnRef]:
    """Live sorts over all K·V candidates that carry an index operand beside the keys (`jnp.argsort`)."""
    k, v = _sizes(trace)
    return [s for s in find(trace.jaxpr, {"sort"}) if _reaches_outputs(trace, s)
            and len(s.eqn["invars"]) > int(s.params.get("num_keys", 1) or 1)
            and s.eqn["invars"][0]["shape"][int(s.params.get("dimension", -1)) % len(s.eqn["invars"][0]["shape"])]
            == k * v]


def _index_nodes(search: EqnRef) -> list[Node]:
    """The flat-index output of a search: top_k's second result, or the sorted operand after the keys."""
    if search.primitive == "top_k":
        return search.out_nodes[1:2]
    return search.out_nodes[-1:]


def flat_index_split(trace: Trace) -> CheckResult:
    k, v = _sizes(trace)
    flat = _over_all_candidates(trace)
    # The row judges the split, whatever searched: a sort's flat indices (`jnp.argsort`) split by integer
    # arithmetic pass it, and the missing top_k is one-top-k's business alone.
    searches = flat + _flat_sorts(trace)
    outs = {name: trace.output_index(name) for name in ("parents", "tokens")}
    used = [s for s in searches if all(set(idx) & set(trace.flow.outputs_reached(_index_nodes(s)))
                                       for idx in outs.values())]
    if len(used) == 1:
        top = used[0]
    elif not used and len(flat) == 1:
        top = flat[0]
    else:
        found = used or searches
        return CheckResult(False, f"There is no single search (a `top_k`, or an argsort) over all K·V = {k * v} "
                           f"flattened candidates whose flat indices could be split ({len(found)} found). Flatten "
                           "the (K, V) candidates, take one `jax.lax.top_k`, then split its indices with `// V` "
                           "and `% V`.", [t.evidence(t.primitive) for t in found[:3]])
    index = _index_nodes(top)
    src = "top_k's" if top.primitive == "top_k" else "the argsort's"
    if not outs["parents"] or not outs["tokens"]:
        return CheckResult(False, "The result has no `parents` or no `tokens` entry to check.")
    found: dict[str, list[EqnRef]] = {}
    on_path: dict[str, set[Node]] = {}
    for name, idx in outs.items():
        if not trace.flow.outputs_reached(index) or not set(idx) & set(trace.flow.outputs_reached(index)):
            return CheckResult(False, f"`{name}` is not computed from the flat indices that "
                               f"`{top.primitive}`{line_hint(top)} returns. Split them: `parents = i // V`, "
                               f"`tokens = i % V` (V = {v}).",
                               [top.evidence(f"{top.primitive} whose indices are not split")])
        found[name], on_path[name] = _path_eqns(trace, index, idx)
    around = trace.flow.reach(trace.inputs("scores", "log_probs"), top.out_nodes)
    for name, idx in outs.items():
        if any(trace.flow.outputs[i] in around for i in idx):
            return CheckResult(False, f"`{name}` is also computed from the scores by a path around the "
                               f"`{top.primitive}`{line_hint(top)}, a second search: take it from {src} flat "
                               "index alone.",
                               [top.evidence(top.primitive)])
    for name, eqns in found.items():
        for ref in eqns:
            prim = ref.primitive
            moved = bool(ref.eqn["invars"]) and node(ref.scope, ref.eqn["invars"][0]) in on_path[name]
            if prim in MOVES or (prim in LOOKUPS and moved):
                continue  # the flat indices themselves cut, reordered or concatenated
            if prim in LOOKUPS:
                return CheckResult(False, f"`{name}` is looked up in a table (`{prim}`{line_hint(ref)}) indexed by "
                                   f"{src} flat index. Compute it with integer arithmetic instead: "
                                   f"`i // V` for the beam and `i % V` for the token (V = {v}).",
                                   [ref.evidence("lookup by the flat index")])
            if prim in SEARCHES or prim.startswith("foreign:"):
                return CheckResult(False, f"`{name}` goes through `{prim.split(':')[-1]}`{line_hint(ref)} on its way "
                                   f"from {src} flat index, a second search or a step that is not integer "
                                   f"arithmetic. Use `i // V` and `i % V` (V = {v}).", [ref.evidence(prim)])
            if prim not in INTEGER_OPS or not _is_integer(ref):
                dtype = ref.eqn["outvars"][0]["dtype"] if ref.eqn["outvars"] else "?"
                return CheckResult(False, f"`{name}` is computed from {src} flat index through `{prim}`"
                                   f"{line_hint(ref)}, which gives {dtype} values: that is not integer arithmetic "
                                   "(a float division and `floor`, say, rounds wrongly once K·V is large). Use the "
                                   f"integer operations `i // V` and `i % V` (V = {v}).",
                                   [ref.evidence("not integer arithmetic")])
    divs = [r for r in found["parents"] if r.primitive == "div"]
    if not divs:
        return CheckResult(False, f"`parents` is computed from {src} flat index without an integer division. "
                           f"The beam of flat index i is `i // V` (V = {v}).", [top.evidence(top.primitive)])
    parents_carry = [carries(trace, d, outputs=["parents"], what="the integer division") for d in divs]
    div = next((d for d, c in zip(divs, parents_carry) if c.ok), None)
    if div is None:
        return CheckResult(False, parents_carry[0].message() + f" Compute `parents = i // V` (V = {v}) from {src} "
                           "flat index and return it.", [d.evidence("division") for d in divs[:2]])
    rems = [r for r in found["tokens"] if r.primitive == "rem"]
    token_carry = [carries(trace, r, outputs=["tokens"], what="the remainder") for r in rems]
    rem = next((r for r, c in zip(rems, token_carry) if c.ok), None)
    if rem is None:
        subtracted = any(r.primitive == "sub" for r in found["tokens"]) and div in found["tokens"]
        via_div = carries(trace, div, outputs=["tokens"], what="the integer division") if subtracted else None
        if via_div is None or not via_div.ok:
            why = token_carry[0].message() + " " if token_carry else ""
            return CheckResult(False, why + f"`tokens` must be the remainder `i % V` of {src} flat index (V = {v}), "
                               "or `i - V * (i // V)`.", [top.evidence(top.primitive)])
        how = "`i - V * (i // V)`"
    else:
        how = f"`i % V`{line_hint(rem)}"
    return CheckResult(True, f"`parents` is `i // V`{line_hint(div)} and `tokens` is {how} of {src} flat index, "
                       "integer arithmetic all the way.", [div.evidence("i // V")] + ([rem.evidence("i % V")] if rem
                                                                                       else []))


def finished_by_select(trace: Trace) -> CheckResult:
    flow = trace.flow
    from_finished = flow.reach(trace.inputs("finished"))
    branches = [r for r in iter_eqns(trace.jaxpr) if (r.primitive == "cond" and _first(r) in from_finished)
                or (r.primitive == "while" and any(n in from_finished for n in r.in_nodes))]
    if branches:
        b = branches[0]
        return CheckResult(False, f"A `{'lax.cond' if b.primitive == 'cond' else 'while loop'}`{line_hint(b)} "
                           "branches on `finished`. Under tracing, handle every beam at once with `jnp.where("
                           "finished[:, None], only_eos, log_probs)` instead of choosing a branch per beam.",
                           [r.evidence("branch on finished") for r in branches[:3]])
    hosts = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CALLBACKS
             and any(n in from_finished for n in r.in_nodes)]
    if hosts:
        h = hosts[0]
        return CheckResult(False, f"A host callback (`{h.primitive}`{line_hint(h)}) reads `finished`: the masking "
                           "then runs in Python outside the compiled program. Use `jnp.where` on `finished`.",
                           [r.evidence("host callback") for r in hosts[:3]])
    # The masking is judged on its own: whatever ranks the candidates (the top_k, or a sort, rounds of argmax,
    # a primitive of the submission's own: one-top-k's business), the select must feed what it ranks.
    ranks = [r for r in iter_eqns(trace.jaxpr) if (r.primitive in RANKS or r.primitive.startswith("foreign:"))
             and _reaches_outputs(trace, r)]
    tops = [r for r in ranks if r.primitive == "top_k"]
    top = (tops or ranks or [None])[0]
    operands = {n for r in ranks for n in r.in_nodes}
    search = (f"the `top_k`{line_hint(top)}" if tops else
              f"the `{top.primitive.split(':')[-1]}`{line_hint(top)} that ranks them" if top else
              "anything ranks them")
    from_log_probs = flow.reach(trace.inputs("log_probs"))
    selects = [r for r in find(trace.jaxpr, {"select_n"}) if _first(r) in from_finished
               and operands & flow.reach(r.out_nodes) and any(n in from_log_probs for n in r.in_nodes[1:])]
    if not selects:
        fed = bool(operands & from_finished)
        how = (" `finished` does reach the candidates, but through arithmetic (a 0/1 factor, a logarithm of a "
               "mask...), not a selection." if fed else " `finished` does not reach the candidates at all, so "
               "finished beams are expanded like the others.")
        return CheckResult(False, f"No `jnp.where` (a `select_n`) on `finished` chooses between the "
                           f"log-probabilities and something else before {search}."
                           + how + " Write `jnp.where(finished[:, None], only_eos, log_probs)`, with `only_eos` 0 at "
                           "`eos_id` and -inf elsewhere.", [top.evidence("ranks the candidates")] if top else [])
    tried = [carries(trace, s, outputs=["scores"], what="the `jnp.where` on `finished`") for s in selects]
    ok = next((s for s, c in zip(selects, tried) if c.ok and own_scale(trace, s) != 0.0), None)
    if ok is None:
        zero = next((s for s, c in zip(selects, tried) if c.ok), None)
        ranker = f"the `{top.primitive.split(':')[-1]}`{line_hint(top)}" if top else "the search"
        why = (f"The `jnp.where` on `finished`{line_hint(zero)} feeds {ranker}, but its result is zero everywhere, "
               "so it adds nothing to the candidates; they are decided some other way." if zero is not None
               else tried[0].message())
        return CheckResult(False, why + f" The selection on `finished` must decide the candidates {ranker} ranks: "
                           "`jnp.where(finished[:, None], only_eos, log_probs)`.",
                           [s.evidence("select on finished") for s in selects[:3]])
    note = tried[selects.index(ok)].note
    return CheckResult(True, f"A `jnp.where` on `finished`{line_hint(ok)} decides the candidates before they "
                       "are ranked, and the new scores depend on it." + note, [ok.evidence("select on finished")])


CHECKS = {
    "one-top-k": one_top_k,
    "flat-index-split": flat_index_split,
    "finished-by-select": finished_by_select,
}
