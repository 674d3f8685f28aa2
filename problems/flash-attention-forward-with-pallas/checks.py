"""Requirement checks for the flash attention forward kernel: the ``pallas_call``'s grid and blocks as data,
its kernel's Refs and the grid steps each write runs at (``grader.toolkit.KernelFlow``), and the TPU v5e
compile record the trusted side made (``grader.toolkit.tpu_compiles``).

``pallas-grid`` finds which operand is `q`, `k` and `v` by the data flow, evaluates every index map at every
grid point, asks the call to carry the answer (a kernel whose output is thrown away or multiplied by zero
fails it) and nothing outside it to compute on the data (``computed_outside``). ``online-softmax-in-scratch``
follows values through the kernel's Refs: which scratch buffer is updated from its own value with the
block's row maxima, which with exponentials summed, which with a product with the `v` block; at which grid
steps each is set and the output written (the ``pl.when`` conditions evaluated at every point); and the
size of everything computed from both `q` and `k`, in the kernel (scratch buffers included) and outside it.
"""
from itertools import permutations
from math import prod

from grader.toolkit import (DATA_MOVES, CheckResult, KernelFlow, Trace, block_indices, carries, computed_outside,
                            from_inputs, line_hint, node, outside_kernels, pallas_calls, revisited_output, scope_of,
                            tpu_compiles, unevaluated)

DATA = ("q", "k", "v")


def _sizes(trace: Trace):
    lq, d = trace.args["q"]
    lk = trace.args["k"][0]
    return lq, lk, d, trace.args["bq"], trace.args["bk"]


def _one_call(trace: Trace):
    calls = pallas_calls(trace)
    if len(calls) != 1:
        return None, CheckResult(False, f"Expected one `pallas_call`, found {len(calls)}: compute the attention "
                                 "with `pl.pallas_call(kernel, grid=(Lq // bq, Lk // bk), in_specs=..., "
                                 "out_specs=..., scratch_shapes=...)(q, k, v)`.",
                                 [c.evidence("pallas_call") for c in calls])
    return calls[0], None


def _operands(trace: Trace, call) -> list:
    """For each input block of the call, the arguments among q, k, v its operand is computed from."""
    p = call.params
    npf = int(p.get("num_scalar_prefetch") or 0)
    count = int(p.get("num_inputs", len(p.get("blocks") or []) - 1))
    reach = {name: from_inputs(trace, name) for name in DATA}
    ops = call.eqn["invars"][npf:npf + count]
    return [[name for name in DATA if node(call.scope, a) in reach[name]] for a in ops]


def pallas_grid(trace: Trace) -> CheckResult:
    call, bad = _one_call(trace)
    if bad:
        return bad
    lq, lk, d, bq, bk = _sizes(trace)
    p = call.params
    want_grid = [lq // bq, lk // bk]
    if p.get("grid") != want_grid:
        got = tuple(p.get("grid") or ())
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} runs over the grid {got}; "
                           f"for Lq={lq}, Lk={lk} with bq={bq}, bk={bk} it should be {tuple(want_grid)}: "
                           "(Lq // bq, Lk // bk), the key/value axis last.", [call.evidence("grid")])
    blocks = p.get("blocks") or []
    count = int(p.get("num_inputs", len(blocks) - 1))
    names = _operands(trace, call)
    if count != 3 or len(blocks) != 4 or p.get("num_scalar_prefetch") or sorted(n for ns in names for n in ns) != \
            sorted(DATA) or any(len(ns) != 1 for ns in names):
        seen = "; ".join(" and ".join(f"`{n}`" for n in ns) or "none of `q`, `k`, `v`" for ns in names)
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} takes {count} blocked operands (computed "
                           f"from, in order: {seen}) and gives {len(blocks) - count} result(s); give it `q`, "
                           "`k` and `v` themselves with one `BlockSpec` each, and one for the output.",
                           [call.evidence("blocks")])
    want = {"q": ([lq, d], [bq, d], "i"), "k": ([lk, d], [bk, d], "j"), "v": ([lk, d], [bk, d], "j")}
    rows = [(b, f"`{ns[0]}`", *want[ns[0]]) for b, ns in enumerate(names)] + [(3, "the output", [lq, d], [bq, d], "i")]
    for b, name, array, block, _ in rows:
        got = blocks[b]
        if got["array_shape"] != array or got["block_shape"] != block:
            return CheckResult(False, f"The block of {name} (`{got['origin']}`, an array of shape "
                               f"{tuple(got['array_shape'])}) is {tuple(got['block_shape'])}; it should be "
                               f"{tuple(block)} of the {tuple(array)} array.", [call.evidence("block")])
    revisit = revisited_output(call)
    if revisit is not None:
        return revisit
    for i in range(want_grid[0]):
        for j in range(want_grid[1]):
            for b, name, _, _, axis in rows:
                wanted = [i if axis == "i" else j, 0]
                at = block_indices(call, b, (i, j))
                if at is None:
                    return CheckResult(False, unevaluated(call, [b]) or "An index map could not be evaluated.",
                                       [call.evidence("index map")])
                if at != wanted:
                    return CheckResult(False, f"At grid step {(i, j)} the index map of {name}'s block{line_hint(call)} "
                                       f"returns {tuple(at)}; it should be {tuple(wanted)}: step (i, j) reads query "
                                       "block i and key/value block j, and writes output block i.",
                                       [call.evidence("index map")])
    carry = carries(trace, call, around_from=DATA, what="the `pallas_call`")
    if not carry.ok:
        return CheckResult(False, carry.message() + " Return the `pallas_call`'s result itself.",
                           [call.evidence("pallas_call that does not carry the answer")] + carry.around_evidence)
    for name in DATA:
        outside = computed_outside(trace, name)
        if outside:
            r = outside[0]
            return CheckResult(False, f"`{r.primitive}`{line_hint(r)} runs outside the kernel on `{name}` or on "
                               "what is made from it: one more pass over the data in HBM. Hand `q`, `k` and `v` to "
                               "the kernel as they are, do all the work inside it (the 1 / sqrt(D) scale too) and "
                               "return the `pallas_call`'s result as it is.",
                               [e.evidence("outside the kernel") for e in outside[:3]])
    return CheckResult(True, f"One `pallas_call`{line_hint(call)} over the grid {tuple(want_grid)} with blocks "
                       f"{(bq, d)} of `q` and the output at (i, 0), {(bk, d)} of `k` and `v` at (j, 0), the result "
                       "comes from it, and nothing outside it computes.", [call.evidence("pallas_call")])


# ------------------------------------------------------------------------------------------------------
# online-softmax-in-scratch

def _held(shape, d: int) -> int:
    """The numbers an array holds, not counting one axis of width d nor one of 128 lanes."""
    rest = list(shape)
    for width in (d, 128):
        if width in rest:
            rest.remove(width)
    return prod(rest)


def _score_matrix(trace: Trace, call, kf: KernelFlow, ref_of: dict) -> CheckResult | None:
    """A failure when something computed from q and k holds more than one (bq, bk) block of scores: an array
    computed outside the kernel (views of what something else computed, such as the result, are not counted
    again), a scratch buffer written with such values, or a value in the kernel."""
    lq, lk, d, bq, bk = _sizes(trace)
    limit = bq * bk
    both = from_inputs(trace, "q") & from_inputs(trace, "k")
    for r in outside_kernels(trace):
        if r.primitive in DATA_MOVES:  # a view or a call holds what something else computed (the result, say)
            continue
        for a in r.eqn["outvars"]:
            if node(r.scope, a) in both and _held(a.get("shape") or [], d) > limit:
                return CheckResult(False, f"`{r.primitive}`{line_hint(r)}, outside the kernel, makes an array of "
                                   f"shape {tuple(a['shape'])} from `q` and `k`: more than one block of scores "
                                   f"(bq x bk = {bq} x {bk}). At Lq = Lk = 32768 the full score matrix alone takes "
                                   "4 GiB; compute one block of scores per grid step inside the kernel.",
                                   [r.evidence("scores outside the kernel")])
    if "q" not in ref_of or "k" not in ref_of:
        return None
    inside = kf.reach(ref_of["q"]) & kf.reach(ref_of["k"])
    npf = int(call.params.get("num_scalar_prefetch") or 0)
    first = npf + len(call.params.get("blocks") or [])
    for s, spec in enumerate(call.params.get("scratch") or []):
        if kf.refs[first + s] in inside and _held(spec["shape"], d) > limit:
            return CheckResult(False, f"Scratch buffer {s} of shape {tuple(spec['shape'])} holds values computed "
                               f"from `q` and `k`: more than one block of scores (bq x bk = {bq} x {bk}). Keep only "
                               "the running maximum, the running sum and the accumulator from step to step, and "
                               "fold each block's scores into them at once.", [call.evidence("scratch_shapes")])
    for r in kf.eqns:
        for a in r.eqn["outvars"]:
            if node(r.scope, a) in inside and "ref" not in a and _held(a.get("shape") or [], d) > limit:
                return CheckResult(False, f"`{r.primitive}`{line_hint(r)} in the kernel makes an array of shape "
                                   f"{tuple(a['shape'])} from `q` and `k`: more than one block of scores "
                                   f"(bq x bk = {bq} x {bk}).", [r.evidence("more than a block of scores")])
    return None


ROLES = ("the running maximum", "the running sum", "the accumulator")


def _role_ok(kf: KernelFlow, role: int, ref: int, m_ref: int | None, v_ref: int | None, scores: set) -> bool:
    """Whether scratch Ref ``ref`` is updated as ``ROLES[role]``: some write to it has a value computed from its
    own contents and, for the sum and the accumulator, from the running maximum's Ref ``m_ref``."""
    for _, target, value in kf.writes:
        if target != ref:
            continue
        src = kf.sources(value)
        if kf.refs[ref] not in src:
            continue
        made = {n: kf.flow.made_by[n][1] for n in src if n in kf.flow.made_by}
        prims = {e["primitive"] for e in made.values()}
        if role == 0:
            reduced = any(e["primitive"] == "reduce_max" and node(scope_of(kf.flow.made_by[n][0]), e["invars"][0])
                          in scores for n, e in made.items())
            if reduced and "max" in prims:
                return True
        elif role == 1:
            if m_ref is not None and kf.refs[m_ref] in src and "reduce_sum" in prims and prims & {"exp", "exp2"}:
                return True
        elif m_ref is not None and v_ref is not None and kf.refs[m_ref] in src:
            from_v = kf.reach(v_ref)
            if any(e["primitive"] == "dot_general" and n in from_v for n, e in made.items()):
                return True
    return False


def online_softmax_in_scratch(trace: Trace) -> CheckResult:
    call, bad = _one_call(trace)
    if bad:
        return bad
    lq, lk, d, bq, bk = _sizes(trace)
    kf = KernelFlow(call)
    p = call.params
    npf = int(p.get("num_scalar_prefetch") or 0)
    blocks = p.get("blocks") or []
    count = int(p.get("num_inputs", len(blocks) - 1))
    ref_of = {}
    for b, ns in enumerate(_operands(trace, call)):
        if len(ns) == 1:
            ref_of.setdefault(ns[0], npf + b)
    outputs = list(range(npf + count, npf + len(blocks)))
    scratch = p.get("scratch") or []
    first = npf + len(blocks)
    failed = _score_matrix(trace, call, kf, ref_of)
    if failed:
        return failed
    usable = [first + s for s, spec in enumerate(scratch)
              if spec.get("dtype") == "float32" and "VMEM" in str(spec.get("space", "")).upper()]
    if len(usable) < 3:
        return CheckResult(False, f"The `pallas_call`{line_hint(call)} has {len(usable)} float32 VMEM scratch "
                           f"buffer(s) ({len(scratch)} in all); keep the running maximum, the running sum and the "
                           "accumulator in three: `scratch_shapes=[pltpu.VMEM((bq, 1), jnp.float32), "
                           "pltpu.VMEM((bq, 1), jnp.float32), pltpu.VMEM((bq, D), jnp.float32)]`.",
                           [call.evidence("scratch_shapes")])
    scores = (kf.reach(ref_of["q"]) & kf.reach(ref_of["k"])) if "q" in ref_of and "k" in ref_of else set()
    v_ref = ref_of.get("v")
    roles = None
    for m_ref, l_ref, acc_ref in permutations(usable, 3):
        if all(_role_ok(kf, role, ref, m_ref, v_ref, scores) for role, ref in enumerate((m_ref, l_ref, acc_ref))):
            roles = (m_ref, l_ref, acc_ref)
            break
    if roles is None:
        maxima = [ref for ref in usable if _role_ok(kf, 0, ref, None, v_ref, scores)]
        missing = [ROLES[role] for role in (1, 2) if not any(
            _role_ok(kf, role, ref, m, v_ref, scores) for ref in usable for m in maxima if m != ref)]
        if not maxima:
            why = ("no VMEM scratch buffer is updated from its own value as the running maximum, "
                   "`jnp.maximum(m_prev, s.max(-1, keepdims=True))` of this block's scores")
        elif missing:
            why = (f"no other VMEM scratch buffer is updated from its own value and from the running maximum as "
                   f"{' or '.join(missing)}: the sum as `alpha * l_prev + p.sum(-1, keepdims=True)`, the accumulator "
                   "as `alpha * acc_prev + jnp.dot(p, v)`, with `p = exp(s - m_new)` and `alpha = exp(m_prev - m_new)`")
        else:
            why = "no three distinct buffers hold the maximum, the sum and the accumulator"
        return CheckResult(False, f"In the kernel{line_hint(call)}, {why}. Each of the three is read from its own "
                           "scratch buffer and written back to it at every key/value step.",
                           [call.evidence("scratch_shapes")])
    grid = [lq // bq, lk // bk]
    first_steps = {(i, 0) for i in range(grid[0])}
    last_steps = {(i, grid[1] - 1) for i in range(grid[0])}
    for role, ref in zip(ROLES, roles):
        inits = [w for w, target, _ in kf.writes if target == ref and kf.steps(w) == first_steps]
        if not inits:
            return CheckResult(False, f"{role.capitalize()} (scratch buffer {ref - first}) is never written at "
                               "exactly the first key/value step of each query block: set it in a function under "
                               "`@pl.when(pl.program_id(1) == 0)` (a `jnp.where` on the program id computes both "
                               "sides at every step; it is not a guard).", [call.evidence("pallas_call")])
    out_writes = [(w, value) for w, target, value in kf.writes if target in outputs]
    if not out_writes:
        return CheckResult(False, "The kernel never writes its output block.", [call.evidence("pallas_call")])
    written = set()
    for w, value in out_writes:
        at = kf.steps(w)
        if at is None or not at <= last_steps:
            when = ("at steps the grader cannot evaluate" if at is None
                    else f"at {len(at)} of the {grid[0] * grid[1]} grid steps")
            return CheckResult(False, f"The output is written{line_hint(w)} {when}; write it once per query "
                               "block, at the last key/value step: under "
                               "`@pl.when(pl.program_id(1) == pl.num_programs(1) - 1)`.", [w.evidence("output write")])
        written |= at
    if written != last_steps:
        return CheckResult(False, "The output is not written at the last key/value step of every query block.",
                           [w.evidence("output write") for w, _ in out_writes])
    src = set().union(*(kf.sources(value) for _, value in out_writes))
    if kf.refs[roles[1]] not in src or kf.refs[roles[2]] not in src:
        return CheckResult(False, "The output written at the last step is not computed from the accumulator and the "
                           "running sum: write `acc_ref[...] / l_ref[...]`.",
                           [w.evidence("output write") for w, _ in out_writes])
    return CheckResult(True, f"The running maximum, sum and accumulator are scratch buffers "
                       f"{', '.join(str(r - first) for r in roles)}, each set at the first key/value step and "
                       "updated from its own value at each step; the output is written from the accumulator and the "
                       "sum at the last step only; nothing computed from `q` and `k` holds more than one block of "
                       "scores.", [call.evidence("pallas_call")])


def compiles_for_tpu(trace: Trace) -> CheckResult:
    return tpu_compiles(trace)


CHECKS = {"pallas-grid": pallas_grid, "online-softmax-in-scratch": online_softmax_in_scratch,
          "compiles-for-tpu-v5e": compiles_for_tpu}
