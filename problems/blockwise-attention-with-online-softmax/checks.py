"""Requirement checks for blockwise-attention-with-online-softmax, read off the traced program.

- The scan must carry the answer (``grader/toolkit/carries.py``: the output moves when the scan's results are
  replaced, and no path from `q`, `k` or `v` reaches it around the scan), from its carry rather than from
  values it stacks, and each step must read its own block of keys and values: the child moves one block of
  rows of `k` and `v` at a time and sees which steps change (``Trace.step_reads``).
- The running maximum cannot be shown to matter by replacing it: softmax does not depend on the number
  subtracted before `exp` as long as the same number is used throughout, so a right program's output stays
  put when the carried maximum is replaced. Its placement is read exactly instead: a carry slot updated as
  the larger of itself and the block's largest score (`max` of the carried value and a `reduce_max` of the
  same scores), an `exp` whose operand is exactly those scores minus that new maximum (a `sub`, through
  reshapes and broadcasts only, so `s - 0 * m_new` or a `jnp.where` does not count), or minus the block's
  own maximum together with an `exp(block max - new max)` the output is computed from (the merge of partial
  softmaxes that maxtext and ring attention write), and an `exp` of exactly old minus new maximum reaching
  every other carried value the output comes from. The child probes every `exp` (`probe_primitives`): the
  exponential of the scores and the factor `exp(old - new)` must move the output when their results are
  replaced, so a factor multiplied by zero is decorative. The factor's probe decides on the visible
  examples' traces (with one block, or with later blocks that underflow next to the first, as some hidden
  cases have on purpose, replacing it moves nothing even in a right program).
- No array computed from both `q` and `k` may hold more than one block of scores, T * block_size numbers,
  not counting one axis of width d (a product before the sum over d) and one of width e (values, the
  output). Counting numbers, not matching shapes, also catches scores stacked by the scan as (S /
  block_size, T, block_size), and a (T, S, d) array of products is as large as the matrix it avoids.
"""
from math import prod

from grader.toolkit import (POSITIONAL, SCAN, CheckResult, EqnRef, Trace, carries, find, iter_eqns, line_hint, node,
                            scope_of)

PASS_ON = {"reshape", "broadcast_in_dim", "convert_element_type", "squeeze", "expand_dims", "copy", "copy_p",
           "stop_gradient", "transpose"}
EXP = {"exp", "exp2"}
HUBS = {"eqn", "in", "out", "control"}
ONLINE = ("`m_new = jnp.maximum(m, s.max(-1))`, `p = jnp.exp(s - m_new[:, None])`, `c = jnp.exp(m - m_new)`, "
          "then `l = c * l + p.sum(-1)` and `o = c[:, None] * o + p @ v_j`")


def _dims(trace: Trace) -> dict:
    t, d = trace.args["q"]
    s, e = trace.args["v"]
    bs = trace.args["block_size"]
    return {"T": t, "d": d, "S": s, "e": e, "bs": bs, "n": s // bs if bs else 0}


def _blind(trace: Trace) -> bool:
    """True when this trace's probes can see nothing: every output was 0 or not finite (a wrong answer whose
    exponentials overflowed to nan), so no replacement could move it."""
    targets = trace.probes.get("targets") or []
    return bool(targets) and all(not any(t.get("scale") or [0]) for t in targets if "scale" in t)


def _foreign_loop(trace: Trace) -> EqnRef | None:
    return next((r for r in iter_eqns(trace.jaxpr) if r.primitive.startswith("foreign:")
                 and r.primitive[8:] in {"scan", "while", "fori_loop"}), None)


# ------------------------------------------------------------------------------------------------------
# one-scan-over-key-blocks

def one_scan_over_key_blocks(trace: Trace) -> CheckResult:
    dims = _dims(trace)
    n = dims["n"]
    scans = find(trace.jaxpr, SCAN)
    if not scans:
        fake = _foreign_loop(trace)
        if fake is not None:
            return CheckResult(False, f"The traced program has no `lax.scan`; `{fake.primitive[8:]}`{line_hint(fake)} "
                               "is a primitive your code defined itself, not JAX's. Walk the key blocks with "
                               "`jax.lax.scan`.", [fake.evidence("not a JAX primitive")])
        loops = find(trace.jaxpr, {"while"})
        seen = (f" It has a `while` loop{line_hint(loops[0])} instead (`lax.while_loop`, or `fori_loop` with bounds "
                "that are not Python ints), which is not a scan of known length." if loops else
                " A Python loop over the blocks unrolls into one copy of the step per block.")
        return CheckResult(False, "The traced program contains no `lax.scan`." + seen + " Stack the blocks with "
                           "`k.reshape(S // block_size, block_size, d)` and walk them with one `jax.lax.scan`.",
                           [r.evidence("loop") for r in loops])
    if len(scans) > 1:
        return CheckResult(False, f"The traced program contains {len(scans)} scans, not one: a first pass over the "
                           "keys for the maximum and a second for the sums reads every key twice. The online "
                           "softmax needs one pass, rescaling what it has summed whenever the maximum grows.",
                           [s.evidence(f"scan of length {s.params.get('length')}") for s in scans])
    scan = scans[0]
    length = scan.params.get("length")
    if length != n:
        what = (" That is one step per key; scan over blocks of `block_size` keys." if length == dims["S"] and n != length
                else " That is one step per query; scan over the key blocks instead." if length == dims["T"] else "")
        return CheckResult(False, f"The scan{line_hint(scan)} runs {length} steps, but S / block_size = "
                           f"{dims['S']} / {dims['bs']} = {n}.{what}", [scan.evidence(f"length {length}, expected {n}")])
    num_carry = int(scan.params.get("num_carry", 0) or 0)
    stacked = trace.flow.outputs_reached(scan.out_nodes[num_carry:])
    if stacked:
        return CheckResult(False, f"The scan{line_hint(scan)} returns a value for every block (its stacked outputs), "
                           "and the output is computed from them after the scan. Keep the running maximum, sum and "
                           "output in the carry and update them step by step, so nothing per block outlives its step.",
                           [scan.evidence("per-step outputs used after the scan")])
    carry = carries(trace, scan, around_from=("q", "k", "v"), what="the scan")
    if carry.still and not carry.around and _blind(trace):
        carry.still = []  # nan outputs: the probes cannot tell; the data flow still decides
    if not carry.ok:
        return CheckResult(False, carry.message() + " Compute the output from what the scan's carry holds at the end.",
                           [scan.evidence("scan that does not carry the answer")] + carry.around_evidence)
    wrong = _block_reads(trace, scan, n, dims["bs"])
    if wrong:
        return wrong
    return CheckResult(True, f"One `lax.scan` of {n} step(s){line_hint(scan)}, each reading its own block of "
                       f"{dims['bs']} keys, and the output comes from its carry.", [scan.evidence(f"scan of {n} steps")])


def _block_reads(trace: Trace, scan: EqnRef, n: int, bs: int) -> CheckResult | None:
    """A failure when a measured step reads another block than its own, or several; None otherwise."""
    if n < 2:
        return None
    if "error" in trace.step_reads:
        return CheckResult(False, "The grader could not measure which keys each scan step reads "
                           f"({trace.step_reads['error']}), so it cannot confirm that step j reads block j. Scan over "
                           "`k.reshape(S // block_size, block_size, d)` and the same for `v`.")
    reads = trace.step_reads.get("reads", {}).get(scan.path)
    if reads is None:
        return None  # this traced shape was not measured; the ones that were decide
    per_step = [[b for b in range(n) if reads[b][j]] for j in range(n)]
    for j, blocks in enumerate(per_step):
        # A step may read nothing measurable: a block whose scores are far below the running maximum has
        # exponentials that underflow to 0, so moving its keys changes nothing (and a nan output hides every
        # step). Only reading another block fails; a scan that reads no keys at all fails `carries` instead.
        if not blocks or blocks == [j]:
            continue
        shown = ", ".join(f"{b * bs}..{(b + 1) * bs - 1}" for b in blocks[:4])
        if len(blocks) > 1:
            why = (f"Step {j}{line_hint(scan)} reads keys from {len(blocks)} blocks (keys {shown}). Block j is keys "
                   "j * block_size to (j + 1) * block_size - 1, consecutive keys: a strided split such as "
                   "`k.reshape(block_size, -1, d).transpose(1, 0, 2)` gives every step keys from all over the "
                   "sequence, and a step that reads all of `k` holds more than its block.")
        else:
            why = (f"Step {j}{line_hint(scan)} reads keys {shown}, block {blocks[0]}, not its own block {j} (keys "
                   f"{j * bs}..{(j + 1) * bs - 1}).")
        return CheckResult(False, why + " Scan over `k.reshape(S // block_size, block_size, d)` in order.",
                           [scan.evidence("steps that do not read their own block")])
    return None


# ------------------------------------------------------------------------------------------------------
# running-max-in-carry

def _back(trace: Trace, n):
    """The equation that really computes ``n``: through reshapes, broadcasts and casts, and into and out of
    `jit` and `checkpoint` sub-programs (a value they pass on has one source). (node, path, eqn)."""
    for _ in range(64):
        made = trace.flow.made_by.get(n)
        preds = trace.flow.back.get(n, [])
        one = preds[0] if len(preds) == 1 and preds[0].rsplit("|", 1)[-1] not in HUBS else None
        if not made:
            if one is None:  # a top-level input, or a loop's carry (fed by its start and by the last step)
                return n, None, None
            n = one  # a sub-program's input: the operand of its equation
            continue
        path, eqn = made
        if eqn["subjaxprs"] and eqn["primitive"] in POSITIONAL and one is not None:
            n = one  # a result of a jit or checkpoint: what its sub-program returns
            continue
        if eqn["primitive"] not in PASS_ON or not eqn["invars"]:
            return n, path, eqn
        nxt = node(scope_of(path), eqn["invars"][0])
        if nxt is None:
            return n, path, eqn
        n = nxt
    return n, None, None


def _slots(loop: EqnRef) -> tuple[str, list, list, list]:
    """(body scope, carry-in atoms, carry-out atoms) of a scan or while loop."""
    if loop.primitive == "scan":
        body = loop.eqn["subjaxprs"]["jaxpr"]
        nc, ncarry = int(loop.params.get("num_consts") or 0), int(loop.params.get("num_carry") or 0)
        return f"{loop.path}/jaxpr/", body["invars"][nc:nc + ncarry], body["outvars"][:ncarry]
    body = loop.eqn["subjaxprs"]["body_jaxpr"]
    bn = int(loop.params.get("body_nconsts") or 0)
    return f"{loop.path}/body_jaxpr/", body["invars"][bn:], body["outvars"]


def _per_query(trace: Trace, eqn: dict) -> bool:
    """A `reduce_max` that takes one maximum per query over one block: T numbers out of T * block_size."""
    dims = _dims(trace)
    held = prod(eqn["invars"][0]["shape"]), prod(eqn["outvars"][0]["shape"])
    return held == (dims["T"] * dims["bs"], dims["T"])


def _running_max(trace: Trace, loop: EqnRef, scores: set) -> tuple[int, object, object, object, object] | None:
    """(slot, old max node, new max node, block scores node, block max node or None) of a carry slot updated
    as max(carried, reduce_max(scores)) (or reduce_max of the carried value stacked with the scores), or None."""
    scope, ins, outs = _slots(loop)
    for i, (a_in, a_out) in enumerate(zip(ins, outs)):
        c, o = node(scope, a_in), node(scope, a_out)
        if c is None or o is None:
            continue
        new, path, eqn = _back(trace, o)
        if eqn is None:
            continue
        eq_scope = scope_of(path)
        operands = [_back(trace, m) for m in (node(eq_scope, a) for a in eqn["invars"]) if m is not None]
        if eqn["primitive"] == "max" and len(operands) == 2:
            for (x, _, _), (y, py, ey) in (operands, operands[::-1]):
                if x == c and ey is not None and ey["primitive"] == "reduce_max" and _per_query(trace, ey):
                    s = node(scope_of(py), ey["invars"][0])
                    if s in scores:
                        return i, c, new, _back(trace, s)[0], y
        if eqn["primitive"] == "reduce_max" and operands and operands[0][2] is not None \
                and operands[0][2]["primitive"] == "concatenate":
            cat_path, cat = operands[0][1], operands[0][2]
            parts = [_back(trace, m)[0] for m in (node(scope_of(cat_path), a) for a in cat["invars"]) if m is not None]
            s = next((p for p in parts if p != c and p in scores), None)
            if c in parts and s is not None:
                return i, c, new, s, None
    return None


def _difference(trace: Trace, ref: EqnRef) -> tuple | None:
    """(a, b) when the `exp` ``ref`` is taken of ``a - b`` (through reshapes, broadcasts and casts)."""
    if not ref.in_nodes or ref.in_nodes[0] is None:
        return None
    _, path, eqn = _back(trace, ref.in_nodes[0])
    if eqn is None or eqn["primitive"] != "sub":
        return None
    ops = [node(scope_of(path), a) for a in eqn["invars"]]
    if None in ops:
        return None
    return tuple(_back(trace, m)[0] for m in ops)


def _moves(trace: Trace, loop: EqnRef, ref: EqnRef, what: str, kind: str) -> str:
    """Empty when the outputs move as the results of ``ref`` are replaced, or when this traced shape cannot
    show it; otherwise what the probe saw. The probes do not enter a `while` loop. A rescaling factor moves
    nothing with one block, nor when the later blocks' exponentials underflow next to the first's (a hidden
    case with falling maxima), so for those only the visible examples' traces decide: every block of every
    example matters to the answer. An `exp` of the scores minus the block's own maximum moves nothing with
    one key per block (it is 1 whatever is put in its place, once normalised)."""
    if ref.inside({"while"}) or _blind(trace):
        return ""
    steps = loop.params.get("length")
    if kind == "rescale" and ((isinstance(steps, int) and steps < 2) or not trace.case.startswith("Example")):
        return ""
    if kind == "local" and _dims(trace)["bs"] < 2:
        return ""
    carry = carries(trace, ref, what=what)
    return "" if carry.ok or not carry.measured else carry.message()


def _online(trace: Trace, loop: EqnRef, found: tuple) -> tuple[list[str], list[EqnRef]]:
    """What is missing from the online softmax around the running maximum ``found`` (empty when nothing is),
    and the equations that show what is there."""
    slot, old, new, s, block_max = found
    body = [r for r in iter_eqns(trace.jaxpr) if r.path.startswith(loop.path + "/") and r.primitive in EXP]
    diffs = {r.path: _difference(trace, r) for r in body}
    shifted = [r for r in body if diffs[r.path] == (s, new)]
    local = [r for r in body if block_max is not None and diffs[r.path] == (s, block_max)]
    onto_new = [r for r in body if block_max is not None and diffs[r.path] == (block_max, new)]
    rescale = [r for r in body if diffs[r.path] == (old, new)]
    missing, shown = [], [loop]
    live_shift = [r for r in shifted if not _moves(trace, loop, r, "the `exp` of the scores minus the new maximum", "shift")]
    live_local = [r for r in local if not _moves(trace, loop, r, "the `exp` of the scores minus the block maximum", "local")]
    # exp(block max - new max) is read by its placement and data flow only: when every block's maximum is the
    # new running maximum it is 1 at every step, and replacing it scales every block alike.
    live_onto = [r for r in onto_new if trace.flow.outputs_reached(r.out_nodes)]
    if live_shift:
        shown.append(live_shift[0])
    elif live_local and live_onto:
        shown += [live_local[0], live_onto[0]]
    elif live_local:
        missing.append(f"the block's `exp(s - block_max)`{line_hint(live_local[0])} is never brought onto the new "
                       "maximum by an `exp(block_max - m_new)` that the output depends on")
    elif shifted or local:
        r = (shifted or local)[0]
        missing.append(f"the `exp` of the scores minus the maximum{line_hint(r)} is there, but the output does not "
                       "depend on it: when the grader replaced its results, the output did not change (it is "
                       "multiplied by zero, selected away, or the answer is computed around it)")
    else:
        missing.append("no `exp` is taken of the block's scores minus the new maximum (`jnp.exp(s - m_new[:, None])`, "
                       "exactly that difference: a shift multiplied by zero, selected by `jnp.where`, or computed "
                       "some other way does not count)")
    live_rescale = [r for r in rescale if not _moves(trace, loop, r, "the factor `exp(old max - new max)`", "rescale")]
    scope, ins, outs = _slots(loop)
    carried = [j for j, a in enumerate(outs) if j != slot
               and not str(a.get("dtype", "")).startswith(("int", "uint", "bool"))
               and node(scope, a) is not None and trace.flow.outputs_reached([node(scope, a)])]
    if not rescale:
        missing.append("no `exp(m - m_new)` of the carried maximum minus the new one rescales what was summed "
                       "under the old maximum")
    elif not live_rescale:
        missing.append(f"the factor `exp(m - m_new)`{line_hint(rescale[0])} is computed, but the output does not "
                       "depend on it: when the grader replaced it, the output did not change")
    else:
        factor = trace.flow.reach([m for r in live_rescale for m in r.out_nodes])
        unscaled = [j for j in carried if node(scope, outs[j]) not in factor]
        shown.append(live_rescale[0])
        if not carried:
            missing.append("no other carried value (the sum, the output) reaches the result")
        elif unscaled:
            missing.append(f"the factor `exp(m - m_new)`{line_hint(live_rescale[0])} does not reach carry slot(s) "
                           f"{', '.join(map(str, unscaled))}, which the output is computed from")
    return missing, shown


def running_max_in_carry(trace: Trace) -> CheckResult:
    loops = [r for r in iter_eqns(trace.jaxpr) if r.primitive in {"scan", "while"}]
    if not loops:
        fake = _foreign_loop(trace)
        extra = (f" (`{fake.primitive[8:]}`{line_hint(fake)} is a primitive your code defined itself, not JAX's)"
                 if fake is not None else "")
        return CheckResult(False, f"The traced program has no loop{extra}, so nothing carries a running maximum "
                           "from block to block. Walk the key blocks with `jax.lax.scan` and carry the maximum, the "
                           "sum and the output.")
    scores = trace.flow.reach(trace.inputs("q")) & trace.flow.reach(trace.inputs("k"))
    best = None
    for loop in loops:
        found = _running_max(trace, loop, scores)
        if found is None:
            continue
        missing, shown = _online(trace, loop, found)
        if not missing:
            return CheckResult(True, f"The loop{line_hint(loop)} carries a running maximum (carry slot {found[0]}), "
                               "updated as the larger of itself and the block's largest score; `exp` is taken of the "
                               "scores minus it, `exp(old - new)` rescales the carried sum and output, and the output "
                               "moves when either exponential is replaced.",
                               [r.evidence("online softmax") for r in shown])
        if best is None or len(missing) < len(best[1]):
            best = (loop, missing, shown)
    if best is None:
        loop = loops[0]
        return CheckResult(False, f"No carry slot of the loop{line_hint(loop)} is a running maximum: none is updated "
                           "as the larger of its carried value and each query's maximum of the block's scores "
                           "(`jnp.maximum(m, s.max(-1))`: T maxima of T x block_size scores, one per query). A running log-sum-exp or a maximum found before the loop is stable too, but "
                           "this problem asks for the maximum carried beside the sum and the output, as "
                           f"FlashAttention does: {ONLINE}.", [r.evidence("loop") for r in loops[:2]])
    loop, missing, shown = best
    return CheckResult(False, f"The loop{line_hint(loop)} carries a running maximum, but "
                       + "; and ".join(missing) + f". {ONLINE}.", [r.evidence("loop") for r in shown])


# ------------------------------------------------------------------------------------------------------
# no-score-matrix

def _held(shape: tuple, d: int, e: int) -> int:
    """The numbers an array holds, not counting one axis of width d (a product before the sum over d) and
    one of width e (a block of weighted values, the output)."""
    rest = list(shape)
    for width in (d, e):
        if width in rest:
            rest.remove(width)
    return prod(rest)


def no_score_matrix(trace: Trace) -> CheckResult:
    dims = _dims(trace)
    limit = dims["T"] * dims["bs"]
    q, k = (trace.flow.reach(trace.inputs(name)) for name in ("q", "k"))
    for r in iter_eqns(trace.jaxpr):
        for a in r.eqn["outvars"]:
            n = node(r.scope, a)
            if n is None or n not in q or n not in k:
                continue
            shape = tuple(a["shape"])
            if _held(shape, dims["d"], dims["e"]) <= limit:
                continue
            stacked = " (the scan stacks one value per step)" if r.primitive in {"scan", "while"} else ""
            return CheckResult(False, f"`{r.primitive.split(':', 1)[-1]}`{line_hint(r)} makes an array of shape {shape} "
                               f"from `q` and `k`{stacked}: {prod(shape)} numbers, more than one block of scores "
                               f"(T x block_size = {dims['T']} x {dims['bs']} = {limit}, times d = {dims['d']} or "
                               f"e = {dims['e']} for an axis of that width). With T = S = 4096 the full score matrix "
                               "alone takes 64 MiB; compute the scores of one block inside each scan step, "
                               "`q @ k_j.T`, and fold them into the running sums there.",
                               [r.evidence(f"{shape} from q and k")])
    return CheckResult(True, f"No array computed from `q` and `k` holds more than one block of scores "
                       f"({dims['T']} x {dims['bs']} = {limit} numbers, not counting an axis of width d or e).")


CHECKS = {
    "one-scan-over-key-blocks": one_scan_over_key_blocks,
    "running-max-in-carry": running_max_in_carry,
    "no-score-matrix": no_score_matrix,
}
