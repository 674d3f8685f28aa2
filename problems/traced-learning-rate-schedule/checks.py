"""Requirement checks for traced-learning-rate-schedule, read off the traced program.

The grader traces with `step` as an int32 input of the program, so a Python `if` on it fails while tracing
(JAX's TracerBoolConversionError, reported as a runtime error); these checks catch the ways around that.
"""
from math import prod

from grader.jaxpr_tools import CheckResult, Trace, input_ids, iter_eqns, line_hint, tainted_vars, var_id

CALLBACKS = {"pure_callback", "io_callback", "callback", "host_callback_call", "outside_call"}
COMPARISONS = {"lt", "le", "gt", "ge", "eq", "ne"}


def no_host_callback(trace: Trace) -> CheckResult:
    calls = [r for r in iter_eqns(trace.jaxpr) if r.primitive in CALLBACKS]
    if calls:
        return CheckResult(False, f"`{calls[0].primitive}`{line_hint(calls[0])} hands the step back to Python to "
                           "compute the rate. That leaves the compiled program at every step, cannot run on "
                           "accelerators without a round trip to the host, and hides the schedule from JAX. "
                           "Compute both phases with `jnp` operations and choose with "
                           "`jnp.where(step < warmup_steps, warm, decay)`.",
                           [r.evidence("host callback") for r in calls])
    return CheckResult(True, "The rate is computed inside the traced program, with no call back into Python.")


def _arrays(jaxpr: dict):
    """(atom, equation or None) for every constant and every equation output, nested programs included."""
    for atom in jaxpr.get("constvars", []):
        yield atom, None
    for ref in iter_eqns(jaxpr):
        for atom in ref.eqn["outvars"]:
            yield atom, ref
        for atom in ref.eqn["invars"]:
            if "lit" in atom:
                yield atom, ref
        for sub in ref.eqn["subjaxprs"].values():
            for atom in sub.get("constvars", []):
                yield atom, ref


def no_step_table(trace: Trace) -> CheckResult:
    total = trace.args["total_steps"]
    limit = max(total, 8)
    for atom, ref in _arrays(trace.jaxpr):
        size = prod(atom["shape"])
        if size >= limit:
            where = f"`{ref.primitive}`{line_hint(ref)}" if ref else "a constant captured by your function"
            return CheckResult(False, f"{where} holds an array of shape {tuple(atom['shape'])}, with at least one "
                               f"entry per training step (total_steps = {total}). Tabulating the schedule costs "
                               "memory and time in proportion to the length of training, to read one number. "
                               "Compute the rate for the given step directly from its formula.",
                               [ref.evidence(f"array of shape {tuple(atom['shape'])}")] if ref else [])
    return CheckResult(True, f"Every array in the program is smaller than total_steps = {total}: the rate is "
                       "computed for the given step alone.")


def select_not_mask(trace: Trace) -> CheckResult:
    from_step = tainted_vars(trace.jaxpr, input_ids(trace, "step"))
    eqns = list(iter_eqns(trace.jaxpr))
    masks = [r for r in eqns if r.primitive == "convert_element_type"
             and r.eqn["invars"] and r.eqn["invars"][0].get("dtype") == "bool"
             and r.eqn["outvars"][0].get("dtype", "").startswith(("float", "bfloat"))
             and var_id(r.eqn["invars"][0]) in from_step]
    if masks:
        return CheckResult(False, f"A comparison on the step is turned into a 0.0/1.0 number{line_hint(masks[0])} "
                           "and used as a mask. Multiplying a phase by 0 does not remove it: an `inf` or `nan` in "
                           "the unused phase (a division by `warmup_steps = 0`, say) still turns the result into "
                           "`nan`, and both phases' gradients flow. Choose with "
                           "`jnp.where(step < warmup_steps, warm, decay)` or `jax.lax.cond` instead.",
                           [r.evidence("comparison used as a number") for r in masks[:4]])
    preference = ["select_n", "cond", "clamp", "min", "max"]
    choices = sorted((r for r in eqns if r.primitive in preference
                      and any(var_id(a) in from_step for a in r.eqn["invars"])),
                     key=lambda r: preference.index(r.primitive))
    if choices:
        return CheckResult(True, f"The phase is chosen in the program with `{choices[0].primitive}`"
                           f"{line_hint(choices[0])}.", [r.evidence("phase choice") for r in choices[:3]])
    return CheckResult(True, "No comparison on the step is used as a 0/1 multiplier.")


CHECKS = {
    "no-host-callback": no_host_callback,
    "no-step-table": no_step_table,
    "select-not-mask": select_not_mask,
}
