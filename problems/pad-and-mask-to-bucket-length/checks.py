"""Requirement checks for pad-and-mask-to-bucket-length, read off the traced program.

The lengths and the buckets are static, so the mask is a constant of the traced program: whatever spelling
builds it (`jnp.arange(T) < lengths`, NumPy, `jnp.pad` of ones), it depends on neither the sequences nor
`pad_value`. That makes both requirements exact data-flow facts:

- `mean` comes from `padded` when, with the nodes holding the returned batch blocked (the output and what
  it is a reshape, cast or `jit` result of), the sequences and `pad_value` reach `mean` no other way;
- the mask is applied to the batch when, among the operations between `padded` and `mean`, a selection
  or product takes a (B, T) operand that depends on neither; and the batch is not cut back to the
  sequences' lengths when no operation between them slices or gathers a smaller piece of it.

That the padding does not move `mean` is checked by the numbers: hidden cases pad with huge values, with a
value that also occurs among the real ones, and pad the same sequences twice with different values.
"""
from math import prod

from grader.toolkit import POSITIONAL, CheckResult, EqnRef, Trace, host_callback, iter_eqns, line_hint, node

MOVE = {"reshape", "convert_element_type", "copy", "copy_p", "squeeze", "expand_dims"}
"""Operations that hand on the same numbers: the returned batch may be a cast or reshape of the one used."""
CUT = {"slice", "dynamic_slice", "gather", "split", "dynamic_index_in_dim"}
MASKING = {"select_n", "mul", "dot_general"}
"""A selection by a mask, or a product with it (`padded * mask`, `einsum("bt,bt->", padded, mask)`)."""
FIX = "`jnp.sum(jnp.where(mask, padded, 0.0)) / jnp.sum(mask)`"


def _sizes(trace: Trace) -> tuple[int, int, list[int]]:
    """B, the length T of the batch the program returns (the numbers say whether it is the right bucket),
    and the sequences' lengths."""
    lengths = [s[0] for s in trace.args["seqs"]]
    index = trace.output_index("padded")
    shape = trace.jaxpr["outvars"][index[0]]["shape"] if index else []
    return len(lengths), (shape[1] if len(shape) == 2 else max(lengths)), lengths


def _returned(trace: Trace, name: str) -> set:
    """The output ``name`` and the values it hands on unchanged: what a cast, a reshape or a ``jit``'s
    result was made from."""
    index = trace.output_index(name)
    if not index:
        return set()
    start = trace.flow.outputs[index[0]]
    found, todo = {start}, [start]
    while todo:
        n = todo.pop()
        made = trace.flow.made_by.get(n)
        if not made:
            continue
        path, eqn = made
        scope = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        if eqn["primitive"] in POSITIONAL and eqn["subjaxprs"]:
            before = trace.flow.back.get(n, [])
        elif eqn["primitive"] in MOVE:
            before = [m for m in (node(scope, a) for a in eqn["invars"]) if m is not None][:1]
        else:
            continue
        for m in before:
            if "|" in m and not m.endswith(("|eqn", "|in", "|out", "|control")) and m not in found:
                found.add(m)
                todo.append(m)
    return found


COMPARE = {"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "is_finite"}
PASS_ON = MOVE | {"broadcast_in_dim"}


def _compared(trace: Trace, n) -> bool:
    """Whether ``n`` is a comparison's result (a 0/1 or boolean mask), perhaps cast or broadcast after it."""
    for _ in range(8):
        made = trace.flow.made_by.get(n)
        if not made:
            return False
        path, eqn = made
        if eqn["primitive"] in COMPARE:
            return True
        if eqn["primitive"] not in PASS_ON or not eqn["invars"]:
            return False
        scope = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        n = node(scope, eqn["invars"][0])
        if n is None:
            return False
    return False


def _made(trace: Trace, nodes: set) -> list[EqnRef]:
    """Equations (not ``jit`` wrappers: what they hold is listed instead) with a result among ``nodes``."""
    return [r for r in iter_eqns(trace.jaxpr) if any(n in nodes for n in r.out_nodes)
            and not (r.eqn["subjaxprs"] and not r.primitive.startswith("foreign:"))]


def _mean_node(trace: Trace):
    index = trace.output_index("mean")
    return trace.flow.outputs[index[0]] if index else None


def mean_from_padded(trace: Trace) -> CheckResult:
    batch, mean = _returned(trace, "padded"), _mean_node(trace)
    if not batch or mean is None:
        return CheckResult(False, "The result has no `padded` or no `mean` entry, so the grader cannot tell where "
                           "the mean comes from. Return a dict with `padded`, `mask` and `mean`.")
    sources = trace.inputs("seqs", "pad_value")
    if mean not in trace.flow.reach(sources):
        return CheckResult(False, "`mean` does not depend on the sequences at all. Average the real positions of "
                           f"the padded batch: {FIX}.")
    around = trace.flow.reach(sources, blocked=batch)
    if mean not in around:
        return CheckResult(True, "The sequences and `pad_value` reach `mean` only through the padded batch you "
                           "return.", [r.evidence("the padded batch") for r in _made(trace, batch)[:1]])
    path = around & trace.flow.sources_of([mean], blocked=batch)
    on_path = _made(trace, path)
    b, t, lengths = _sizes(trace)
    other = next((r for r in on_path for o in r.eqn["outvars"]
                  if len(o["shape"]) == 2 and o["shape"][0] == b and o["shape"][1] != t), None)
    evidence = [r.evidence("reaches `mean` around `padded`") for r in on_path if r.primitive not in MOVE][:4]
    if other is not None:
        width = next(o["shape"][1] for o in other.eqn["outvars"] if len(o["shape"]) == 2)
        return CheckResult(False, f"`mean` is computed from a second batch of length {width}, made by "
                           f"`{other.primitive}`{line_hint(other)}, not from the batch of length T = {t} you "
                           "return: its program depends on the exact lengths, which is what the bucket is there "
                           f"to avoid. Pad once, to the bucket, and compute the mean from that batch: {FIX}.",
                           [other.evidence(f"a batch of length {width}")] + evidence)
    pad_only = trace.inputs("pad_value")
    if mean in trace.flow.reach(pad_only, blocked=batch) and mean not in trace.flow.reach(trace.inputs("seqs"),
                                                                                         blocked=batch):
        compare = next((r for r in on_path if r.primitive in COMPARE), None)
        if compare is not None:
            return CheckResult(False, f"`pad_value` reaches `mean` around the padded batch through "
                               f"`{compare.primitive}`{line_hint(compare)}: the mask is made by comparing with the "
                               "pad value, which also hides any real value equal to it. Build the mask from the "
                               f"lengths instead: {FIX}.", [compare.evidence("compares with the pad value")])
        return CheckResult(False, "`pad_value` reaches `mean` by a path around the padded batch: the padding's "
                           "total is taken back out by arithmetic. With a large pad value the sum has already "
                           f"lost the real values' digits; keep the padding out with the mask instead: {FIX}.",
                           evidence)
    first = evidence[0] if evidence else None
    where = f" (for instance `{first.primitive}`{f' at your line {first.source_line}' if first and first.source_line else ''})" if first else ""
    return CheckResult(False, "`mean` is computed from the sequences by a path that does not go through the "
                       f"padded batch you return{where}: reading the sequences directly (concatenating, summing "
                       "or indexing them) gives the same number but skips the padding and the mask a model's loss "
                       "works with. Compute it "
                       f"from `padded` and `mask`: {FIX}.", evidence)


def mask_over_batch(trace: Trace) -> CheckResult:
    batch, mean = _returned(trace, "padded"), _mean_node(trace)
    if not batch or mean is None:
        return CheckResult(False, "The result has no `padded` or no `mean` entry. Return a dict with `padded`, "
                           "`mask` and `mean`.")
    b, t, lengths = _sizes(trace)
    from_values = trace.flow.reach(trace.inputs("seqs", "pad_value"))
    between = trace.flow.reach(batch) & trace.flow.sources_of([mean])
    if not between:
        return CheckResult(False, "`mean` is not computed from the padded batch, so no mask is applied to it. "
                           f"Average the real positions of the batch: {FIX}.")
    masked, by_value = [], []
    for r in _made(trace, between):
        if r.primitive.startswith("foreign:"):
            return CheckResult(False, f"`{r.primitive[8:]}`{line_hint(r)} is a primitive your code defined itself, "
                               "not one of JAX's, so the grader cannot tell what it does with the padding. Use "
                               f"`jax.numpy`: {FIX}.", [r.evidence("not a JAX primitive")])
        ins = [(a, node(r.scope, a)) for a in r.eqn["invars"]]
        if r.primitive in CUT and any(n in between or n in batch for _, n in ins):
            source = max(prod(a["shape"]) for a, n in ins if n in between or n in batch)
            out = r.eqn["outvars"][0]["shape"]
            if prod(out) < source:
                return CheckResult(False, f"`{r.primitive}`{line_hint(r)} cuts a piece of shape {tuple(out)} out of "
                                   f"the padded batch on the way to `mean`: the real positions are picked out row "
                                   "by row (or by position) instead of being masked, so the mean's program depends "
                                   "on each sequence's length. Keep the whole (B, T) batch and apply the mask: "
                                   f"{FIX}.", [r.evidence("cuts the batch")])
        if r.primitive in MASKING:
            for k, (a, n) in enumerate(ins):
                if n is None or prod(a["shape"]) != b * t:
                    continue
                if r.primitive == "select_n" and k > 0:
                    continue  # a value to select, not the mask (`jnp.where(mask, padded, 0.0)`'s zeros)
                if n not in from_values:
                    masked.append(r)  # depends on neither the sequences nor pad_value: built from the lengths
                elif r.primitive == "select_n" or _compared(trace, n):
                    by_value.append(r)  # a mask, but computed from the values
    if by_value:
        hosted = host_callback(trace, "", "the grader cannot see whether it reads the lengths or the values",
                               "Build the mask in the traced program from the lengths, `jnp.arange(T)[None, :] "
                               f"< jnp.array(lengths)[:, None]`, and apply it: {FIX}.",
                               into=list(by_value[0].in_nodes), into_name="the mask")
        if not hosted.passed:
            return hosted
    hosted = host_callback(trace, "", "the grader cannot see what the host does with the padding",
                           f"Mask and average in the traced program: {FIX}.", into=[_mean_node(trace)],
                           into_name="`mean`")
    if not hosted.passed:
        return hosted
    if sum(lengths) == b * t:
        return CheckResult(True, f"No sequence needs padding here (every length is T = {t}), and nothing cuts the "
                           "batch on the way to `mean`.")
    if masked:
        return CheckResult(True, f"`{masked[0].primitive}`{line_hint(masked[0])} applies a (B, T) mask built from "
                           "the lengths to the padded batch on the way to `mean`, and nothing cuts the batch.",
                           [masked[0].evidence("applies the mask")])
    if by_value:
        return CheckResult(False, f"`{by_value[0].primitive}`{line_hint(by_value[0])} masks the batch with a mask "
                           "computed from the values themselves (such as `padded != pad_value`): a real value equal "
                           "to the pad value is dropped with the padding. Build the mask from the lengths, "
                           "`jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]`, and apply it: "
                           f"{FIX}.", [by_value[0].evidence("mask computed from the values")])
    return CheckResult(False, "No selection or product applies a (B, T) mask to the padded batch on the way to "
                       "`mean`: the padded positions are averaged in, or taken back out by arithmetic. Build the "
                       f"mask from the lengths and apply it: {FIX}.")


CHECKS = {
    "mean-from-padded": mean_from_padded,
    "mask-over-batch": mask_over_batch,
}
