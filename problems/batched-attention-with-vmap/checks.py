"""Requirement checks for batched-attention-with-vmap, read off the traced program.

**batched-not-looped** follows the examples through the program (``grader/toolkit/axes.py``): a Python loop over
the examples slices them apart (``q[b]``), ``lax.map``/``scan`` walk the batch axis, a ``fori_loop`` cuts
``q[i]`` out with ``dynamic_slice``. Every operation that computes the output from a piece of the batch cut
out that way is a per-example copy; ``jax.vmap`` and hand-batched code never cut the batch axis. Slicing
another axis (a loop over the query positions of one example) cuts nothing and is fine. A decorative vmap
next to a loop does not help: it is the loop's operations that compute the output. Examples picked out
without slicing fail too: a contraction or sum over the batch axis (a one-hot selection), or a mask over
the examples made with ``arange``/``one_hot``/``eye`` or a constant array (the batch run once per example).

**stable-softmax** is about placement, and softmax is shift-invariant, so no probe can show it (moving a
correctly subtracted maximum moves no output, exactly like a decorative one). ``softmax_shift.py`` reads the
exponent of every exponential that computes the output from the scores as ``a * Z + b + sum c * stat(Z)``
and accepts it when it is ``Z`` minus each row's maximum of the same ``Z`` along the key axis (the axis that
comes from the rows of ``k``), or its log-sum-exp; data flow then confirms that the scores reach the output
only through those exponentials.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from grader.toolkit import Axes, CheckResult, EqnRef, Trace, axes_of, from_inputs, iter_eqns, line_hint, param

_spec = importlib.util.spec_from_file_location("problems.batched_attention_with_vmap.softmax_shift",
                                               Path(__file__).with_name("softmax_shift.py"))
shift = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(shift)

BATCH = {"q": 0, "k": 0, "v": 0}
KEY, QUERY = ("arg", "k", 1), ("arg", "q", 1)
OPAQUE = {"pure_callback", "io_callback", "callback", "custom_call"}
MOVES_DATA = {"reshape", "squeeze", "broadcast_in_dim", "transpose", "convert_element_type", "copy", "copy_p",
              "slice", "dynamic_slice", "gather", "stop_gradient", "rev", "pad"}
"""Operations that only move values around: a cut example passing through them is reported where it is used."""
AROUND = {"exp", "exp2", "expm1", "pow", "logistic", "tanh", "cosh", "sinh", "log", "log1p", "integer_pow", "erf"}
"""Nonlinear operations worth naming on a path around the checked exponentials."""
LOOPS = {"scan": "a `lax.scan`", "while": "a `lax.while_loop`"}
LOOP_API = {"lax.map": "`lax.map`", "lax.fori_loop": "`lax.fori_loop`", "lax.scan": "`lax.scan`",
            "lax.while_loop": "`lax.while_loop`"}


def loop_name(api: list[str]) -> str:
    """The loop the learner wrote, from a loop equation's API markers: the innermost loop call, except that
    `lax.map` and `lax.fori_loop` are written with a `scan` or `while_loop` inside."""
    calls = [a for a in api if a in LOOP_API]
    if not calls:
        return ""
    if len(calls) > 1 and calls[-1] in ("lax.scan", "lax.while_loop") and calls[-2] in ("lax.map", "lax.fori_loop"):
        return LOOP_API[calls[-2]]
    return LOOP_API[calls[-1]]


def _answer_path(trace: Trace) -> tuple[set, set]:
    """Nodes the outputs depend on, and nodes computed from q, k or v."""
    flow = trace.flow
    return flow.sources_of(flow.outputs), from_inputs(trace, "q", "k", "v")


def _computes(ref: EqnRef, answer: set, data: set) -> bool:
    return any(o in answer for o in ref.out_nodes) and any(n in data for n in ref.in_nodes)


def _opaque(ref: EqnRef) -> bool:
    return ref.primitive.startswith("foreign:") or ref.primitive in OPAQUE


def _opaque_message(ref: EqnRef, about: str) -> str:
    name = ref.primitive.split(":", 1)[-1]
    what = ("a primitive your code defined itself, not JAX's" if ref.primitive.startswith("foreign:")
            else "a call out of JAX into Python")
    return (f"`{name}`{line_hint(ref)} is {what}, and it computes part of the output: the grader cannot see "
            f"{about}. Compute attention with JAX's own operations (`jnp`, `lax`, `jax.nn`).")


def batched_not_looped(trace: Trace) -> CheckResult:
    b = trace.args["q"][0]
    axes = axes_of(trace, BATCH)
    answer, data = _answer_path(trace)
    per_example, opaque, mixing = [], [], []
    for ref in iter_eqns(trace.jaxpr):
        if not _computes(ref, answer, data):
            continue
        if _opaque(ref):
            opaque.append(ref)
        elif not ref.eqn["subjaxprs"] and ref.primitive not in MOVES_DATA:
            cut = set().union(*(axes.cut.get(n, ()) for n in ref.in_nodes))
            if cut:
                per_example.append((ref, cut))
            how = _picks_examples(ref, axes)
            if how:
                mixing.append((ref, how))
    if opaque:
        return CheckResult(False, _opaque_message(opaque[0], "how it treats the examples"),
                           [r.evidence("not a JAX primitive") for r in opaque[:3]])
    if per_example:
        return _looped(trace, axes, per_example)
    if mixing:
        ref, how = mixing[0]
        return CheckResult(False, f"`{ref.primitive}`{line_hint(ref)} {how}: that picks examples out of the batch "
                           "(or mixes them), as a loop over the examples with one-hot selections does. Each example "
                           "must be attended to on its own, all at once: `jax.vmap(attend)(q, k, v)`.",
                           [r.evidence("selects or mixes examples") for r, _ in mixing[:4]])
    vmaps = trace.source.of("vmap")  # wording only, read from the source (the program looks the same)
    how = f"it is batched with `jax.vmap` ({trace.source.note(vmaps)})" if vmaps else "it is batched by hand"
    whole = f"all {b} examples" if b > 1 else "the whole batch"
    note = " (with B = 1 a loop over the examples cannot show; the traces with more examples decide)" if b == 1 else ""
    return CheckResult(True, f"Every operation that computes the output works on {whole} at once: {how}, and "
                       f"nothing slices, indexes or loops the examples apart{note}.")


def _picks_examples(ref: EqnRef, axes: Axes) -> str:
    """How an equation selects or mixes examples without slicing them: summing or contracting over the batch
    axis (a one-hot contraction picks one example), or a mask made with ``arange``/``one_hot`` over it."""
    atoms = [a for a in ref.eqn["invars"] if "id" in a]
    labels = [axes.of(n) for n in ref.in_nodes]

    def batch(k: int, d: int) -> bool:  # axis d of operand k is a batch axis of more than one example
        return d < len(labels[k]) and bool(axes.batch_roots(labels[k], d)) and atoms[k]["shape"][d] > 1

    if ref.primitive == "dot_general" and len(labels) == 2:
        (lc, rc), _ = param(ref.params["dimension_numbers"])
        if any(batch(0, d) for d in lc) or any(batch(1, d) for d in rc):
            return "contracts the batch axis"
    if ref.primitive in ("reduce_sum", "reduce_prod", "argmax", "argmin") and labels:
        if any(batch(0, a) for a in param(ref.params["axes"])):
            return "sums over the batch axis"
    for atom, n in zip(ref.eqn["outvars"], ref.out_nodes):
        lab = axes.of(n)
        if any(axes.batch_roots(lab, i) and Axes.made_axes(lab, i) and atom["shape"][i] > 1 for i in range(len(lab))):
            return ("combines the batch with a mask over the examples (made with `arange`, `one_hot`, `eye` or a "
                    "constant array)")
    return ""


def _looped(trace: Trace, axes: Axes, per_example: list) -> CheckResult:
    ref, cut = per_example[0]
    names = ", ".join(f"`{n}`" for n in sorted(cut))
    cutter = next((trace.eqn_at[p] for p in axes.cuts_at if p in trace.eqn_at and axes.cuts_at[p] & cut), None)
    loop = next((a for a in reversed(ref.ancestors) if a.primitive in LOOPS and cutter is not None
                 and (cutter.path == a.path or cutter.path.startswith(a.path + "/"))), None)
    heavy = [r for r, _ in per_example if r.primitive in ("dot_general", "exp")]
    evidence = ([cutter.evidence("takes the examples apart")] if cutter else []) + [
        r.evidence("computes on part of the batch") for r, _ in per_example[:4]]
    if loop is not None:
        api = loop_name(loop.api) or LOOPS[loop.primitive]
        return CheckResult(False, f"{api}{line_hint(loop)} walks the examples one step at a time: inside it, "
                           f"`{ref.primitive}`{line_hint(ref)} computes on a single example cut out of {names}. The "
                           "examples are independent: write attention for one example and map it over the batch "
                           "with `jax.vmap(attend)(q, k, v)` (a loop over the query positions of one example is "
                           "fine).", [loop.evidence("loop over the examples")] + evidence)
    where = (f"`{cutter.primitive}`{line_hint(cutter)} cuts pieces of the batch out of {names}, and " if cutter
             else "")
    copies = f" ({len(heavy)} matrix products and exponentials in all)" if len(heavy) > 1 else ""
    return CheckResult(False, f"The program takes the batch apart: {where}`{ref.primitive}`{line_hint(ref)} and "
                       f"the operations after it compute on those pieces one at a time{copies}, as a Python loop "
                       "over the examples does (one copy of attention per example, a program that grows with the "
                       "batch). Write attention for one example and map it with `jax.vmap(attend)(q, k, v)`, or "
                       "batch it by hand with `einsum`; a loop over the query positions of one example is fine.",
                       evidence)


# ----------------------------------------------------------------------------------------------------

def _reading(trace: Trace):
    cached = trace.__dict__.get("_softmax_reading")
    if cached is None:
        cached = trace.__dict__["_softmax_reading"] = shift.read(trace.jaxpr)
    return cached


def _key_axes(trace: Trace, axes: Axes, reading, form) -> tuple[set[int], tuple]:
    """The key axis of the array an exponent's statistics were taken of (its axes that come from the rows of
    ``k``), and that array's labels. With S = 1 a reshape can merge the key axis's label into another axis;
    then any axes of length 1 that the statistics were taken over stand for it (a maximum over them is the
    score itself, so the exponent is 0 whichever they are)."""
    if not isinstance(form, shift.Lin):
        return set(), ()
    frame_node, path = reading.frames.get(form.frame, (None, ""))
    labels = axes.of(frame_node)
    many = trace.args["q"][0] > 1  # with B = 1 a reshape may merge the batch axis's label into the key axis
    keys = {i for i, ax in enumerate(labels) if KEY in ax and QUERY not in ax
            and not (many and axes.batch_roots(labels, i))}
    if not keys and trace.args["k"][1] == 1 and path in trace.eqn_at:
        atom = next((a for a in trace.eqn_at[path].eqn["outvars"] if frame_node.endswith("|" + str(a.get("id")))),
                    None)
        stats = {r for (_, R, _), _ in form.terms for r in R}
        if atom is not None and stats and all(r < len(atom["shape"]) and atom["shape"][r] == 1 for r in stats):
            keys = stats
    return keys, labels


def _axis_words(labels: tuple, axis: int, axes: Axes) -> str:
    ax = labels[axis] if axis < len(labels) else frozenset()
    if KEY in ax:
        return "the key axis"
    if QUERY in ax:
        return "the query axis"
    if axes.batch_roots(labels, axis):
        return "the batch axis"
    return f"axis {axis}"


def stable_softmax(trace: Trace) -> CheckResult:
    reading = _reading(trace)
    axes = axes_of(trace, BATCH)
    answer, _ = _answer_path(trace)
    from_qk = from_inputs(trace, "q", "k")
    exps = []
    for ref in iter_eqns(trace.jaxpr):
        if ref.path not in reading.exponents or not any(o in answer for o in ref.out_nodes):
            continue
        exponent = ref.in_nodes[-1] if ref.primitive == "pow" else (ref.in_nodes[:1] or [None])[0]
        if exponent in from_qk:
            exps.append(ref)
    if not exps:
        return CheckResult(False, "No `exp` of JAX's computes the output from the scores" + _around_note(trace, [])
                           + ". Compute the weights as `exp(s - max) / sum(exp(s - max))` with `jnp.exp`, or with "
                           "`jax.nn.softmax`.")
    for ref in exps:
        form = reading.exponents[ref.path]
        keys, labels = _key_axes(trace, axes, reading, form)
        verdict = shift.judge(form, keys)
        if not verdict.stable:
            return CheckResult(False, _unstable_message(trace, ref, verdict, form, labels, axes, reading),
                               [ref.evidence("exponent not shifted by the row maximum")])
    around = _around(trace, exps)
    if around:
        return around
    lse = any(k[0] == "lse" for ref in exps for k, _ in getattr(reading.exponents[ref.path], "terms", ()))
    how = " (or its log-sum-exp)" if lse else ""
    count = f"all {len(exps)} exponentials of the scores" if len(exps) > 1 else "the exponential of the scores"
    return CheckResult(True, f"Before {count}{line_hint(exps[0])}, each row's maximum along the key axis{how} is "
                       "subtracted from the same scores, so no exponent exceeds 0.",
                       [r.evidence("exp of shifted scores") for r in exps[:3]])


def _unstable_message(trace: Trace, ref: EqnRef, verdict, form, labels: tuple, axes: Axes, reading) -> str:
    head = f"`{ref.primitive}`{line_hint(ref)} is not applied to scores minus their row maximum: "
    if verdict.why == "wrong-axes":
        words = [_axis_words(labels, r, axes) for r in sorted(verdict.R)]
        along = " and ".join(words) or "no axis"
        if "the batch axis" in words:
            effect = ("one maximum for the whole batch: rows whose own maximum is far below it underflow to "
                      "0 / 0 = nan")
        elif len(words) > 1:
            effect = ("one maximum per example: rows whose own maximum is far below the example's largest "
                      "score underflow to 0 / 0 = nan")
        else:
            effect = ("each key of a row is shifted by a different amount, which changes the softmax, and a row's "
                      "largest exponent is not bounded")
        why = f"the maximum it subtracts is taken along {along}, not along the key axis alone ({effect})."
    else:
        why = verdict.why
        other = getattr(form, "frame", None)
        if isinstance(form, shift.Opaque) and other is not None:
            made = trace.eqn_at.get(reading.frames.get(other, (None, ""))[1])
            if made is not None:
                why += f" (the result of `{made.primitive}`{line_hint(made)}, not the scores being exponentiated)"
        elif isinstance(form, shift.Lin) and not form.terms:
            made = trace.eqn_at.get(reading.frames.get(form.frame, (None, ""))[1])
            if made is not None and made.primitive in ("clamp", "min", "max"):
                why += " (the scores are clipped instead, which changes the weights of large scores)"
        why += "."
    return (head + why + " Scores above about 88 overflow float32. Subtract `s.max(axis=-1, keepdims=True)` "
            "(each query's maximum over the keys, of the same scores) before `jnp.exp`, or use "
            "`jax.nn.softmax(s, axis=-1)`.")


def _around(trace: Trace, exps: list[EqnRef]) -> CheckResult | None:
    """A failure when q or k reach the output by a path that avoids every checked exponential."""
    flow = trace.flow
    blocked = [n for r in exps for n in r.out_nodes]
    reached = flow.reach(trace.inputs("q", "k"), blocked)
    if not any(o in reached for o in flow.outputs):
        return None
    return CheckResult(False, "The output is also computed from the scores by a path that goes around the "
                       "shifted exponentials" + _around_note(trace, exps) + ": every weight must come from "
                       "`exp(s - max)` (or `jax.nn.softmax`).", [r.evidence("row-shifted exp") for r in exps[:2]])


def _around_note(trace: Trace, exps: list[EqnRef]) -> str:
    flow = trace.flow
    blocked = [n for r in exps for n in r.out_nodes]
    on_path = flow.reach(trace.inputs("q", "k"), blocked) & flow.sources_of(flow.outputs, blocked)
    seen = [r for r in iter_eqns(trace.jaxpr) if any(o in on_path for o in r.out_nodes)
            and (_opaque(r) or r.primitive in AROUND)]
    if not seen:
        return ""
    r = seen[0]
    if _opaque(r):
        return (f": it goes through `{r.primitive.split(':', 1)[-1]}`{line_hint(r)}, a primitive your code "
                "defined itself, whose work the grader cannot see")
    return f" (through `{r.primitive}`{line_hint(r)})"


CHECKS = {
    "batched-not-looped": batched_not_looped,
    "stable-softmax": stable_softmax,
}
