"""Requirement checks for per-example-gradient-clipping, read off the traced program.

`jax.vmap(jax.grad(loss))` leaves one backward pass (equations marked ``transpose(jvp(...))``) whose
arrays all carry the batch axis of length B. A Python loop leaves B backward passes on single examples,
whose arrays lack it. The Jacobian of the per-example losses pushes B basis vectors through a batch of B,
leaving arrays with two axes of length B inside autodiff. The hidden cases keep B apart from D, H, D * H and
the parameter count where that matters.
"""
import re

from grader.jaxpr_tools import LOOPS, CheckResult, Trace, iter_eqns, line_hint

_BACKWARD = re.compile(r"(?<![a-z_])transpose\(")
_AUTODIFF = re.compile(r"(?<![a-z_])(jvp|transpose)\(")


def _dims(trace: Trace) -> tuple[int, int, int]:
    b, d = trace.args["x"]
    h = trace.args["params"]["b1"][0]
    return b, d, h


def batched_per_example_grads(trace: Trace) -> CheckResult:
    b, d, h = _dims(trace)
    backward = [r for r in iter_eqns(trace.jaxpr) if _BACKWARD.search(r.full_name_stack)]
    if not backward:
        return CheckResult(False, "The traced program has no backward pass made by autodiff (no equation marked "
                           "`transpose(jvp(...))`), so the per-example gradients were written by hand. Let JAX "
                           "derive them: `jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, x, y)`.")
    looped = [r for r in backward if r.inside(LOOPS)]
    if looped:
        loop = next(a for a in reversed(looped[0].ancestors) if a.primitive in LOOPS)
        return CheckResult(False, f"The backward pass runs inside a `{loop.primitive}` loop{line_hint(loop)}, one "
                           "example per step (as `lax.map` or `fori_loop` over the batch does). The examples are "
                           "independent: `jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))` differentiates all of "
                           "them at once.", [loop.evidence("loop over the examples"),
                                             looped[0].evidence("backward pass inside the loop")])
    if b >= 2 and b not in (d, h):
        single = [r for r in backward if any(o["shape"] and b not in o["shape"] for o in r.eqn["outvars"])]
        if single:
            shape = next(tuple(o["shape"]) for o in single[0].eqn["outvars"] if o["shape"] and b not in o["shape"])
            return CheckResult(False, f"The backward pass works on arrays without the batch axis, e.g. "
                               f"`{single[0].primitive}` of shape {shape}{line_hint(single[0])}: each example is "
                               f"differentiated separately, so the program holds one backward pass per example "
                               f"({b} here) and grows with the batch. Write the loss of one example and map its "
                               "gradient with `jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))`.",
                               [r.evidence(f"unbatched backward {tuple(r.eqn['outvars'][0]['shape'])}")
                                for r in single[:6]])
    return CheckResult(True, f"One backward pass{line_hint(backward[0])} computes the gradients of all {b} "
                       "example(s) at once.", [r.evidence("batched backward pass") for r in backward[:3]])


def no_batch_jacobian(trace: Trace) -> CheckResult:
    b, d, h = _dims(trace)
    # B must not also be a parameter size, or a flattened per-example gradient (B, P) could look square.
    if b >= 2 and b not in (d, h, d * h, d * h + 2 * h + 1):
        square = [r for r in iter_eqns(trace.jaxpr) if _AUTODIFF.search(r.full_name_stack)
                  and any(list(o["shape"]).count(b) >= 2 for o in r.eqn["outvars"])]
        if square:
            shape = next(tuple(o["shape"]) for o in square[0].eqn["outvars"] if list(o["shape"]).count(b) >= 2)
            return CheckResult(False, f"`{square[0].primitive}`{line_hint(square[0])} produces an array of shape "
                               f"{shape}, with two axes of length B = {b}. That is the Jacobian of the vector of "
                               "per-example losses (`jax.jacrev`/`jax.jacfwd`): it differentiates every loss with "
                               f"respect to the whole batch, {b} times the work, and all but the diagonal is zero. "
                               "Differentiate one example's loss and vmap it: "
                               "`jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))`.",
                               [r.evidence("B-by-B intermediate") for r in square[:6]])
    return CheckResult(True, f"No array in the derivative computation has two axes of length B = {b}.")


CHECKS = {
    "batched-per-example-grads": batched_per_example_grads,
    "no-batch-jacobian": no_batch_jacobian,
}
