"""Requirement checks for straight-through-estimator-with-custom-vjp, read off the traced program.

Under `jax.value_and_grad`, a `jax.custom_vjp` function leaves different traces depending on how it is
written: a forward rule that calls the decorated function leaves a `custom_vjp_call` equation holding it; a
forward rule that rounds by itself (or through a plain helper) leaves ordinary equations, which the child
marks with the JAX entry points that made them (``custom_vjp``, ``custom_vjp.fwd``); the backward rule's
equations sit in the backward pass, marked ``custom_vjp`` without ``custom_vjp.fwd``. These markers come
from JAX's own code objects, so no submission can forge them, and a primitive merely *named*
`custom_vjp_call` is not JAX's.

A structure counts only where it carries the answer: the rounding in the custom VJP's forward function must
be what the loss is computed from (the grader replaces its values and the loss moves; `w` reaches the loss
by no other path), and the gradient must come from autodiff's backward pass through the backward rule (no
path from `w`, `x` or `y` reaches it around the rule).
"""
from grader.toolkit import CheckResult, EqnRef, Evidence, Trace, carries, chain, groups, iter_eqns, line_hint

CUSTOM_VJP_CALL = {"custom_vjp_call", "custom_vjp_call_jaxpr"}
CUSTOM_JVP_CALL = {"custom_jvp_call", "custom_jvp_call_jaxpr"}
ROUNDING = {"round", "floor", "ceil"}
MATMUL = {"dot_general"}
REVERSE_APIS = ("value_and_grad", "grad", "vjp", "jacrev")
MAX_PASSES = 8
"""Backward passes (of the shallowest sub-programs that have one) tried as the gradient's source."""


def _markers(ref: EqnRef) -> list[str]:
    """The JAX entry points running when the equation was made. Inside a `jit` whose equation carries none
    (a `jax.jit` called at the top level), the innermost markers that were recorded are used, so code under
    `jax.jit(jax.value_and_grad(...))` is read like the same code without the jit."""
    for r in ref.ancestors + (ref,):
        if r.eqn.get("api"):
            return list(r.eqn["api"])
    return []


def _after(markers: list[str], name: str) -> list[str]:
    """The markers after the last occurrence of ``name`` (``None``-like empty list when absent)."""
    if name not in markers:
        return []
    return markers[len(markers) - markers[::-1].index(name):]


def _in_custom_vjp(ref: EqnRef) -> bool:
    return any(a.primitive in CUSTOM_VJP_CALL for a in ref.ancestors) or "custom_vjp" in _markers(ref)


def _forward_of_custom_vjp(ref: EqnRef) -> bool:
    """Made by a custom VJP's forward computation: inside a `custom_vjp_call`, or by its forward rule."""
    if any(a.primitive in CUSTOM_VJP_CALL for a in ref.ancestors):
        return True
    return "custom_vjp.fwd" in _after(_markers(ref), "custom_vjp") or (
        "custom_vjp" in _markers(ref) and not _backward(ref))


def _backward(ref: EqnRef) -> bool:
    return "transpose" in chain(ref.full_name_stack)


def _backward_rule(ref: EqnRef) -> bool:
    """Made by a custom VJP's backward rule: in the backward pass, under `custom_vjp` but not its forward rule."""
    markers = _markers(ref)
    return _backward(ref) and "custom_vjp" in markers and "custom_vjp.fwd" not in _after(markers, "custom_vjp")


class Facts:
    """What the traced program does with custom derivatives, computed once per trace."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        flow = trace.flow
        eqns = list(iter_eqns(trace.jaxpr))
        from_w = flow.reach(trace.inputs("w"))
        self.calls = [e for e in eqns if e.primitive in CUSTOM_VJP_CALL]
        self.custom = [e for e in eqns if _in_custom_vjp(e) or e.primitive in CUSTOM_VJP_CALL]
        self.forward = [e for e in self.custom if not _backward_rule(e)]
        self.rule = [e for e in eqns if _backward_rule(e)]
        self.roundings = [e for e in eqns if e.primitive in ROUNDING and any(n in from_w for n in e.in_nodes)]
        self.quantizer = [e for e in self.roundings if _forward_of_custom_vjp(e)]
        self.fake = [e for e in eqns if e.primitive.startswith("foreign:")]
        self.jvps = [e for e in eqns if e.primitive in CUSTOM_JVP_CALL or "custom_jvp" in _markers(e)]
        self.stops = [e for e in eqns if e.primitive == "stop_gradient"]
        self.reverse_api = next((a for e in eqns for a in _markers(e) if a in REVERSE_APIS), "")
        self.transposed = [e for e in eqns if _backward(e)]
        self.differentiated_custom = [e for e in self.custom if "jvp" in chain(e.full_name_stack)
                                      or "custom_vjp.fwd" in _markers(e)]

    # -- row 1: the rounding in the custom VJP's forward function carries the loss -----------------------
    def rounding_carries(self) -> tuple[bool, str, list[Evidence]]:
        trace = self.trace
        if not self.quantizer:
            return False, "", []
        moved = []
        for e in self.quantizer:
            c = carries(trace, e, outputs=["loss"])
            if not c.measured or c.unknown:  # not probed here: the data flow below still decides
                moved = None
                break
            if c.ok:
                moved.append(e)
        if moved is not None and not moved:
            return False, (f"The rounding in your `jax.custom_vjp` function{line_hint(self.quantizer[0])} is "
                           "decorative: when the grader replaced its values, `loss` did not change at all, so the "
                           "loss is computed some other way (the custom function's result is thrown away, "
                           "multiplied by zero, selected away or added and subtracted again)."), \
                [e.evidence("rounding that does not reach the loss") for e in self.quantizer[:2]]
        blocked = [n for e in self.quantizer for n in e.out_nodes]
        reached = trace.flow.reach(trace.inputs("w"), blocked)
        if any(trace.flow.outputs[k] in reached for k in trace.output_index("loss")):
            around = [e for e in self.roundings if e not in self.quantizer and any(n in reached for n in e.out_nodes)]
            where = f" (for instance the rounding{line_hint(around[0])})" if around else ""
            return False, ("`loss` is also computed from `w` by a path that goes around the rounding in your "
                           f"`jax.custom_vjp` function{where}: the loss must come from the custom quantizer "
                           "alone, not from a quantizer beside it."), \
                [e.evidence("rounding on a path around the custom quantizer") for e in around[:2]]
        best = (moved or self.quantizer)[0]
        return True, "", [best.evidence("rounding in the custom VJP's forward function")]

    # -- row 3: the gradient comes from the backward pass, through the backward rule ---------------------
    def backward_carries(self, through_rule: bool = True) -> tuple[bool, str, list[Evidence]]:
        trace = self.trace
        passes = [g for g in groups(trace) if "transpose" in g.chain]
        depth = min((g.scope.count("/") for g in passes), default=0)
        passes = [g for g in passes if g.scope.count("/") == depth][:MAX_PASSES]  # bounded work
        tried = [carries(trace, g, outputs=["grad"], around_from=("w", "x", "y"), what="autodiff's backward pass")
                 for g in passes]
        carry = next((c for c in tried if c.ok), tried[0] if tried else None)
        if carry is None:
            return False, "no-backward", []
        if not carry.ok:
            return False, carry.message(), carry.around_evidence
        if self.rule and through_rule:
            blocked = [n for e in self.rule for n in e.out_nodes]
            reached = trace.flow.reach(trace.inputs("w", "x", "y"), blocked)
            if any(trace.flow.outputs[k] in reached for k in trace.output_index("grad")):
                return False, ("`grad` comes from autodiff's backward pass, but not only through your backward "
                               f"rule{line_hint(self.rule[0])}: part of it goes around the rule, through a "
                               "gradient autodiff derived for something else (such as the `stop_gradient` "
                               "trick)."), [e.evidence("backward rule") for e in self.rule[:2]]
        return True, "", [e.evidence("backward rule") for e in self.rule[:2]]

    def reads_data(self) -> list[EqnRef]:
        """Custom-VJP equations that read `x` or `y` other than through the cotangent autodiff hands the rule."""
        trace = self.trace
        derived = [n for e in self.transposed if not _backward_rule(e) for n in e.out_nodes]
        reached = trace.flow.reach(trace.inputs("x", "y"), derived)
        return [e for e in self.custom if any(n in reached for n in e.in_nodes)]


_CACHE: dict[int, tuple[Trace, Facts]] = {}


def facts(trace: Trace) -> Facts:
    cached = _CACHE.get(id(trace))
    if cached is not None and cached[0] is trace:
        return cached[1]
    if len(_CACHE) > 32:
        _CACHE.clear()
    result = Facts(trace)
    _CACHE[id(trace)] = (trace, result)
    return result


def _instead(f: Facts) -> str:
    """What the program uses instead of a `jax.custom_vjp` (a clause), or ""."""
    if f.fake:
        e = f.fake[0]
        return (f"`{e.primitive[8:]}`{line_hint(e)} is a primitive your code registered itself, not JAX's, "
                "whatever it is named")
    if f.jvps:
        return f"the quantizer is a `jax.custom_jvp`{line_hint(f.jvps[0])}, whose JVP rule autodiff transposes"
    if f.stops:
        return (f"the rounding is hidden from autodiff with `stop_gradient`{line_hint(f.stops[0])}, the "
                "`w + stop_gradient(q(w) - w)` trick")
    return ""


def _no_custom_vjp(f: Facts) -> str:
    instead = _instead(f)
    return "there is no `jax.custom_vjp` in the traced program" + (f" ({instead})" if instead else "")


def _instead_evidence(f: Facts) -> list[Evidence]:
    return [e.evidence("not a custom VJP") for e in (f.fake or f.jvps or f.stops)[:3]]


# ----------------------------------------------------------------------------------------------------
# The three rows

def custom_vjp(trace: Trace) -> CheckResult:
    f = facts(trace)
    if not f.custom:
        return CheckResult(False, "T" + _no_custom_vjp(f)[1:] + ". Define `quantize` with `@jax.custom_vjp`, "
                           "round in its forward function, and give it a backward rule with "
                           "`quantize.defvjp(fwd, bwd)`.", _instead_evidence(f))
    if not f.quantizer:
        where = line_hint(f.custom[0])
        outside = [e for e in f.roundings if not _in_custom_vjp(e)]
        seen = (f" The rounding{line_hint(outside[0])} is outside it." if outside else "")
        return CheckResult(False, f"There is a `jax.custom_vjp` function{where}, but no rounding of `w` runs in its "
                           f"forward function.{seen} Put `jnp.round(jnp.clip(w, -1, 1) * levels) / levels` in the "
                           "custom function (and in its forward rule, or call the function from it).",
                           [f.custom[0].evidence("custom VJP without the rounding")] +
                           [e.evidence("rounding outside the custom VJP") for e in outside[:2]])
    ok, why, evidence = f.rounding_carries()
    if not ok:
        return CheckResult(False, why + " Compute the loss from `x @ quantize(w)`, with `quantize` your custom "
                           "VJP function.", evidence)
    return CheckResult(True, f"The rounding{line_hint(f.quantizer[0])} runs in the forward function of a "
                       "`jax.custom_vjp`, and the loss is computed from it.", evidence)


def quantizer_only(trace: Trace) -> CheckResult:
    f = facts(trace)
    if not f.custom:
        return CheckResult(False, f"No custom VJP holds the quantizer: {_no_custom_vjp(f)}. Make only "
                           "`quantize(w)` a `jax.custom_vjp` function, and let `jax.value_and_grad` differentiate "
                           "`x @ quantize(w)` and the loss.", _instead_evidence(f))
    readers = f.reads_data()
    dots = [e for e in f.custom if e.primitive in MATMUL]
    if readers or dots:
        e = (dots or readers)[0]
        part = "backward rule" if _backward_rule(e) else "forward computation"
        what = "computes a matrix product" if e.primitive in MATMUL else "reads data from `x` or `y`"
        from_w = trace.flow.reach(trace.inputs("w"))
        if not any(n in from_w for c in f.custom for n in c.in_nodes):
            why = "it is not the quantizer of `w` at all"
        else:
            why = ("it wraps the model or the loss, not just the quantizer, so its rule spells out their gradient "
                   "by hand")
        return CheckResult(False, f"The `jax.custom_vjp` function's {part} {what}{line_hint(e)}: {why}. "
                           "Make only `quantize(w)` custom and let `jax.value_and_grad` derive the gradient of "
                           "`x @ quantize(w)` and of the loss.",
                           [e.evidence("custom VJP reading the data") for e in (dots + readers)[:3]])
    carried, why, evidence = f.rounding_carries()
    through_rule, why_rule, _ = f.backward_carries() if f.rule else (False, "", [])
    if not carried and not through_rule:
        return CheckResult(False, "Your `jax.custom_vjp` function carries neither the loss nor the gradient. "
                           + (why or why_rule or "Nothing the function returns depends on it.") +
                           " Wrap the quantizer in it and use it for the loss.",
                           evidence or [f.custom[0].evidence("custom VJP")])
    e = (f.quantizer or f.rule or f.custom)[0]
    return CheckResult(True, f"The `jax.custom_vjp` function{line_hint(e)} holds only the quantizer: it reads "
                       "no `x` or `y` and holds no matrix product, so JAX derives the gradient of the product "
                       "and the loss.", [e.evidence("custom VJP")])


def grad_by_autodiff(trace: Trace) -> CheckResult:
    """Whether reverse-mode autodiff was asked for is read from the source (``Trace.source``: parsed, never
    run); the marks JAX leaves on a backward pass (written in the learner's process) may only refuse: where
    they show one, it must be what `grad` comes from. Whether the gradient goes through a custom VJP's rule is
    the other rows' business: a `custom_jvp` or the `stop_gradient` trick also gets its gradient from autodiff."""
    f = facts(trace)
    calls = trace.source.of(*REVERSE_APIS)
    if not calls:
        producers = [e for e in iter_eqns(trace.jaxpr) if e.primitive in MATMUL]
        seen = f" (for instance `dot_general`{line_hint(producers[-1])})" if producers else ""
        return CheckResult(False, "Your source calls no `jax.grad`, `jax.value_and_grad` or `jax.vjp` (read from "
                           f"your source): `grad` is computed by other operations{seen}, written out by hand. "
                           "Return `jax.value_and_grad(loss)(w)` with `loss` calling your quantizer.",
                           [e.evidence("computes grad") for e in producers[-2:]])
    api = f"`{calls[0].spelled}`"
    note = trace.source.note(calls)
    ok, why, evidence = f.backward_carries(through_rule=False)
    if not ok and why != "no-backward":
        return CheckResult(False, why + f" Return the gradient that {api} computes.", evidence)
    rule = (f" through your backward rule{line_hint(f.rule[0])}" if f.rule and ok else "")
    return CheckResult(True, f"`grad` comes from reverse-mode autodiff{rule} ({note}), and nothing computes it "
                       "around autodiff's backward pass.", evidence)


CHECKS = {
    "custom-vjp": custom_vjp,
    "quantizer-only": quantizer_only,
    "grad-by-autodiff": grad_by_autodiff,
}
