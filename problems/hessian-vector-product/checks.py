"""Requirement checks for hessian-vector-product, read off the traced program.

Autodiff writes its transformations into every equation's name stack, outermost first: ``jvp(...)`` for
forward mode, ``transpose(jvp(...))`` for the backward pass of reverse mode, ``vmap(...)`` for batching.
Forward-over-reverse leaves ``jvp(transpose(jvp(...)))``; a second reverse pass leaves a stack that starts
with ``transpose(`` and holds two ``jvp(``; ``jax.hessian``/``jacfwd``/``jacrev`` leave ``vmap(`` around
autodiff.
"""
import re

from grader.jaxpr_tools import CheckResult, EqnRef, Trace, iter_eqns, line_hint

_TOKEN = re.compile(r"(?<![a-z_])(jvp|transpose|vmap)\(")


def _chain(ref: EqnRef) -> list[str]:
    """The autodiff/batching transformations around an equation, outermost first."""
    return _TOKEN.findall(ref.full_name_stack)


def _dims(trace: Trace) -> tuple[int, int]:
    n, d = trace.args["x"]
    return n, d


def no_dense_hessian(trace: Trace) -> CheckResult:
    n, d = _dims(trace)
    eqns = list(iter_eqns(trace.jaxpr))
    jacobian = [r for r in eqns if "vmap" in _chain(r) and ("jvp" in _chain(r) or "transpose" in _chain(r))]
    if jacobian:
        return CheckResult(False, f"Autodiff runs under `vmap`{line_hint(jacobian[0])} (name stack "
                           f"`{jacobian[0].full_name_stack}`): that is how `jax.hessian`, `jax.jacfwd` and "
                           f"`jax.jacrev` build a full Jacobian, one column per basis vector, here all {d * d} "
                           "entries of the Hessian. Push the single direction `v` through the gradient with "
                           "`jax.jvp(grad_fn, (w,), (v,))` instead.",
                           [r.evidence("autodiff under vmap") for r in jacobian[:6]])
    if d >= 2 and n != d:
        square = [r for r in eqns if any(list(o["shape"]).count(d) >= 2 for o in r.eqn["outvars"])]
        if square:
            shape = next(tuple(o["shape"]) for o in square[0].eqn["outvars"] if list(o["shape"]).count(d) >= 2)
            return CheckResult(False, f"`{square[0].primitive}`{line_hint(square[0])} produces an array of shape "
                               f"{shape}, with two axes of length D = {d}: a Hessian-sized intermediate. Its "
                               f"{d * d} entries are what a Hessian-vector product avoids storing; compute "
                               "`jax.jvp(grad_fn, (w,), (v,))` and keep every intermediate at the size of `w` "
                               "or of the batch.", [r.evidence("D-by-D intermediate") for r in square[:6]])
    return CheckResult(True, f"No intermediate has two axes of length D = {d}, and no Jacobian is built "
                       "column by column.")


def forward_over_reverse(trace: Trace) -> CheckResult:
    eqns = list(iter_eqns(trace.jaxpr))
    second_reverse = [r for r in eqns if _chain(r)[:1] == ["transpose"] and _chain(r).count("jvp") >= 2]
    if second_reverse:
        r = second_reverse[0]
        kind = "reverse-over-reverse" if _chain(r).count("transpose") >= 2 else "reverse-over-forward"
        return CheckResult(False, f"The outer derivative is reverse mode{line_hint(r)} (name stack "
                           f"`{r.full_name_stack}`): this is {kind}, a `jax.grad` applied to a function that "
                           "already differentiates. It gives the right numbers but stores a second set of "
                           "intermediates for its backward pass. Differentiate the gradient in forward mode: "
                           "`jax.jvp(lambda w: jax.grad(loss)(w, x, y), (w,), (v,))`.",
                           [e.evidence("second-order reverse pass") for e in second_reverse[:6]])
    over = [r for r in eqns if "transpose" in _chain(r) and "jvp" in _chain(r)[:_chain(r).index("transpose")]]
    if over:
        return CheckResult(True, f"The gradient's backward pass is differentiated in forward mode"
                           f"{line_hint(over[0])} (name stack `{over[0].full_name_stack}`).",
                           [r.evidence("jvp of the backward pass") for r in over[:4]])
    backward = [r for r in eqns if "transpose" in _chain(r)]
    if backward:
        return CheckResult(False, "The program has a gradient's backward pass, but nothing differentiates it "
                           "again: the Hessian-vector product was not taken by autodiff (finite differences "
                           "or a formula written by hand). Apply `jax.jvp` to the gradient function, with `v` "
                           "as the tangent.", [r.evidence("first-order backward pass") for r in backward[:4]])
    return CheckResult(False, "The traced program contains no autodiff at all (no equation marked `jvp(...)` "
                       "or `transpose(...)`), so both the gradient and the product were written by hand. Let "
                       "JAX derive them: `jax.jvp(jax.grad(loss_of_w), (w,), (v,))`.")


CHECKS = {
    "no-dense-hessian": no_dense_hessian,
    "forward-over-reverse": forward_over_reverse,
}
