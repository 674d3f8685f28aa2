"""Requirement checks for straight-through-estimator-with-custom-vjp, read off the traced program.

A `jax.custom_vjp` function appears in the traced program as one ``custom_vjp_call`` equation (older JAX:
``custom_vjp_call_jaxpr``) whose sub-program is the forward function; the backward rule is inlined into
the backward pass when the function is differentiated.
"""
from grader.jaxpr_tools import (MATMUL, CheckResult, EqnRef, Trace, body_eqns, find, is_backward_autodiff,
                                is_differentiated, iter_eqns, line_hint)

CUSTOM_VJP = {"custom_vjp_call", "custom_vjp_call_jaxpr"}
CUSTOM_JVP = {"custom_jvp_call", "custom_jvp_call_jaxpr"}
ROUNDING = {"round", "floor", "ceil", "nearbyint"}


def _rounds(ref: EqnRef) -> bool:
    return any(e.primitive in ROUNDING for e in body_eqns(ref))


def _quantizers(trace: Trace) -> list[EqnRef]:
    """The custom-VJP calls that do the rounding, or every custom-VJP call if none does."""
    calls = find(trace.jaxpr, CUSTOM_VJP)
    rounding = [c for c in calls if _rounds(c)]
    return rounding or calls


def custom_vjp(trace: Trace) -> CheckResult:
    calls = find(trace.jaxpr, CUSTOM_VJP)
    rounding = [c for c in calls if _rounds(c)]
    if rounding:
        return CheckResult(True, f"The rounding runs inside a `jax.custom_vjp` function{line_hint(rounding[0])}.",
                           [c.evidence("custom_vjp with rounding") for c in rounding[:3]])
    if calls:
        return CheckResult(False, f"There is a `jax.custom_vjp` function{line_hint(calls[0])}, but the rounding "
                           "is not inside it, so autodiff still sees the rounding and gives it a zero "
                           "derivative. Put `jnp.round` in the custom function's forward pass.",
                           [c.evidence("custom_vjp without rounding") for c in calls[:3]])
    jvps = [c for c in find(trace.jaxpr, CUSTOM_JVP) if _rounds(c)]
    if jvps:
        return CheckResult(False, f"The quantizer is a `jax.custom_jvp`{line_hint(jvps[0])}. That gives the "
                           "right gradient too, but this problem is about writing the backward pass directly: "
                           "use `@jax.custom_vjp` with `quantize.defvjp(fwd, bwd)`.",
                           [c.evidence("custom_jvp") for c in jvps[:3]])
    stops = [e for e in iter_eqns(trace.jaxpr) if e.primitive == "stop_gradient"]
    if stops:
        return CheckResult(False, f"The program hides the rounding from autodiff with `stop_gradient`"
                           f"{line_hint(stops[0])} (the `w + stop_gradient(q(w) - w)` trick). It works, but it "
                           "states the backward pass only implicitly; write it explicitly with "
                           "`@jax.custom_vjp`: round in `fwd`, and return `g * (jnp.abs(w) <= 1)` from `bwd`.",
                           [e.evidence("stop_gradient") for e in stops[:3]])
    return CheckResult(False, "The traced program contains no `jax.custom_vjp` function (no `custom_vjp_call` "
                       "equation). Define `quantize` with `@jax.custom_vjp`, round in its forward function, and "
                       "give it a backward rule with `quantize.defvjp(fwd, bwd)`.")


def quantizer_only(trace: Trace) -> CheckResult:
    for call in _quantizers(trace):
        dots = [e for e in body_eqns(call) if e.primitive in MATMUL]
        if dots:
            return CheckResult(False, f"The `jax.custom_vjp` function{line_hint(call)} contains a matrix product"
                               f"{line_hint(dots[0])}: it wraps the model or the loss, not just the quantizer, so "
                               "its backward rule has to spell out the whole gradient by hand. Make only "
                               "`quantize(w)` custom and let `jax.value_and_grad` differentiate `x @ quantize(w)` "
                               "and the loss.", [call.evidence("custom_vjp")] +
                               [d.evidence("matrix product inside the custom function") for d in dots[:3]])
    calls = _quantizers(trace)
    if calls:
        return CheckResult(True, f"The `jax.custom_vjp` function{line_hint(calls[0])} holds only the quantizer; "
                           "the matrix product and the loss are differentiated by JAX.",
                           [c.evidence("custom_vjp") for c in calls[:3]])
    return CheckResult(True, "No custom-derivative function wraps a matrix product.")


def grad_by_autodiff(trace: Trace) -> CheckResult:
    calls = _quantizers(trace)
    undifferentiated = [c for c in calls if not is_differentiated(c)]
    if undifferentiated and not any(is_differentiated(c) for c in calls):
        call = undifferentiated[0]
        return CheckResult(False, f"The `jax.custom_vjp` function{line_hint(call)} is called, but never "
                           "differentiated: no `jax.grad` or `jax.value_and_grad` runs through it, so its "
                           "backward rule is never used and the gradient must have been written by hand. Return "
                           "`jax.value_and_grad(loss)(w)` with `loss` calling your quantizer.",
                           [call.evidence("custom_vjp outside autodiff")])
    backward = [e for e in iter_eqns(trace.jaxpr) if is_backward_autodiff(e.full_name_stack)]
    if not backward:
        return CheckResult(False, "The traced program has no backward pass made by autodiff (no equation marked "
                           "`transpose(jvp(...))`): the gradient was written out by hand. Let "
                           "`jax.value_and_grad` compute it through your custom quantizer.")
    return CheckResult(True, f"The gradient comes from autodiff's backward pass ({len(backward)} equations"
                       f"{', through the custom rule' if calls else ''}).",
                       [e.evidence("backward pass") for e in backward[:3]])


CHECKS = {
    "custom-vjp": custom_vjp,
    "quantizer-only": quantizer_only,
    "grad-by-autodiff": grad_by_autodiff,
}
