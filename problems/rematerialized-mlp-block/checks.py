"""Requirement checks for rematerialized-mlp-block, read off the traced program.

All three look at the same checkpointed region: the one that satisfies most of them (policy, then
differentiated, then tanh), so a submission passes all three only when one region does.
"""
from grader.jaxpr_tools import (CHECKPOINT, MATMUL, CheckResult, EqnRef, Trace, body_eqns, find, input_ids,
                                is_backward_autodiff, line_hint, tainted_vars, var_id)

ALIASES = {"dots_saveable", "checkpoint_dots"}


def _differentiated(ref: EqnRef) -> bool:
    """Reverse-mode autodiff recomputes the region in its backward pass (forward mode alone saves nothing)."""
    return ref.params.get("differentiated") is True or is_backward_autodiff(ref.full_name_stack)


def _tanh_of_x(ref: EqnRef, data: set[str]) -> list[EqnRef]:
    return [e for e in body_eqns(ref) if e.primitive == "tanh" and any(var_id(a) in data for a in e.eqn["invars"])]


def _props(ref: EqnRef, data: set[str]) -> tuple[bool, bool, bool]:
    policy_ok = ref.params.get("policy") in ALIASES and any(e.primitive in MATMUL for e in body_eqns(ref))
    return policy_ok, _differentiated(ref), bool(_tanh_of_x(ref, data))


def _best(trace: Trace) -> tuple[EqnRef | None, tuple[bool, bool, bool], set[str]]:
    data = tainted_vars(trace.jaxpr, input_ids(trace, "x"))
    regions = find(trace.jaxpr, CHECKPOINT)
    if not regions:
        return None, (False, False, False), data
    best = max(regions, key=lambda r: (sum(_props(r, data)),) + _props(r, data))
    return best, _props(best, data), data


NO_REGION = ("The traced program has no checkpointed region (no `remat2`/`checkpoint` equation). Wrap the block "
             "in `jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)` inside the loss you "
             "differentiate.")


def _policy_name(ref: EqnRef) -> str:
    policy = ref.params.get("policy")
    if policy is None:
        return "no policy (the default saves nothing and recomputes everything)"
    if str(policy).startswith("custom:"):
        return f"a policy function of your own, `{policy[7:]}`"
    return f"`jax.checkpoint_policies.{policy}`"


def checkpoint_dots_saveable(trace: Trace) -> CheckResult:
    region, (policy_ok, _, _), _ = _best(trace)
    if region is None:
        return CheckResult(False, NO_REGION)
    if region.params.get("policy") not in ALIASES:
        return CheckResult(False, f"The checkpointed region{line_hint(region)} uses {_policy_name(region)}. "
                           "This problem keeps the matrix products and recomputes the rest: pass "
                           "`policy=jax.checkpoint_policies.dots_saveable`.",
                           [region.evidence(f"policy {region.params.get('policy')}")])
    if not policy_ok:
        return CheckResult(False, f"The checkpointed region{line_hint(region)} uses `dots_saveable` but holds no "
                           "matrix product, so the policy has nothing to save. Checkpoint the whole block, "
                           "`x + tanh(x @ w1 + b1) @ w2 + b2`, not just the activation.",
                           [region.evidence("dots_saveable around no matrix product")])
    return CheckResult(True, f"The checkpointed region{line_hint(region)} uses `dots_saveable`.",
                       [region.evidence("checkpoint with dots_saveable")])


def checkpoint_inside_grad(trace: Trace) -> CheckResult:
    region, (_, differentiated, _), _ = _best(trace)
    if region is None:
        return CheckResult(False, NO_REGION)
    if not differentiated:
        wraps_grad = any(is_backward_autodiff(e.eqn["name_stack"]) for e in body_eqns(region))
        why = ("it wraps the gradient computation instead of sitting inside it, so there is no backward pass "
               "for it to save memory in" if wraps_grad else
               "reverse-mode autodiff never goes through it (forward mode, `jax.jvp`/`jax.jacfwd`, does not "
               "count, and neither does a region whose output the differentiated loss does not use)")
        return CheckResult(False, f"The checkpointed region{line_hint(region)} is never differentiated: {why}. "
                           "Apply `jax.checkpoint` to the block inside the loss function you pass to "
                           "`jax.value_and_grad`.", [region.evidence("checkpoint outside autodiff")])
    return CheckResult(True, f"The checkpointed region{line_hint(region)} is differentiated: autodiff "
                       "recomputes it in the backward pass.", [region.evidence("differentiated checkpoint")])


def tanh_in_checkpoint(trace: Trace) -> CheckResult:
    region, (_, _, holds_tanh), data = _best(trace)
    if region is None:
        return CheckResult(False, NO_REGION)
    if not holds_tanh:
        if region.params.get("policy") == "everything_saveable":
            why = ("with `everything_saveable` autodiff stores every activation and recomputes nothing, so no "
                   "`tanh` is left inside the region to find. Use `dots_saveable` so the tanh is recomputed")
        else:
            why = ("so the hidden activation is stored rather than recomputed. Checkpoint the whole block, "
                   "`x + tanh(x @ w1 + b1) @ w2 + b2`")
        return CheckResult(False, f"The checkpointed region{line_hint(region)} does not contain the hidden "
                           f"layer's `tanh` (the one computed from `x`), {why}.",
                           [region.evidence("checkpoint without the hidden tanh")])
    tanh = _tanh_of_x(region, data)[0]
    return CheckResult(True, f"The checkpointed region{line_hint(region)} recomputes the `tanh`"
                       f"{line_hint(tanh)}.", [region.evidence("checkpoint"), tanh.evidence("tanh inside")])


CHECKS = {
    "checkpoint-dots-saveable": checkpoint_dots_saveable,
    "checkpoint-inside-grad": checkpoint_inside_grad,
    "tanh-in-checkpoint": tanh_in_checkpoint,
}
