"""Requirement checks for rematerialized-mlp-block, read off the traced program.

All three look at the same checkpointed region: the one that satisfies most of them (policy, then
differentiated, then tanh), so a submission passes all three only when one region does.
"""
from grader.jaxpr_tools import CHECKPOINT, CheckResult, EqnRef, Trace, body_eqns, find, is_differentiated, line_hint

POLICY = "dots_saveable"
ALIASES = {"dots_saveable", "checkpoint_dots"}


def _props(ref: EqnRef) -> tuple[bool, bool, bool]:
    policy_ok = ref.params.get("policy") in ALIASES
    holds_tanh = any(e.primitive == "tanh" for e in body_eqns(ref))
    return policy_ok, is_differentiated(ref), holds_tanh


def _best(trace: Trace) -> tuple[EqnRef | None, tuple[bool, bool, bool]]:
    regions = find(trace.jaxpr, CHECKPOINT)
    if not regions:
        return None, (False, False, False)
    best = max(regions, key=lambda r: (sum(_props(r)),) + _props(r))
    return best, _props(best)


NO_REGION = ("The traced program has no checkpointed region (no `remat2`/`checkpoint` equation). Wrap the block "
             "in `jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)` inside the loss you "
             "differentiate.")


def _policy_name(ref: EqnRef) -> str:
    policy = ref.params.get("policy")
    if policy is None:
        return "no policy (the default saves nothing and recomputes everything)"
    if str(policy).startswith("custom:"):
        return f"a hand-written policy `{policy[7:]}`"
    return f"`jax.checkpoint_policies.{policy}`"


def checkpoint_dots_saveable(trace: Trace) -> CheckResult:
    region, (policy_ok, _, _) = _best(trace)
    if region is None:
        return CheckResult(False, NO_REGION)
    if not policy_ok:
        return CheckResult(False, f"The checkpointed region{line_hint(region)} uses {_policy_name(region)}. "
                           "This problem keeps the matrix products and recomputes the rest: pass "
                           "`policy=jax.checkpoint_policies.dots_saveable`.",
                           [region.evidence(f"policy {region.params.get('policy')}")])
    return CheckResult(True, f"The checkpointed region{line_hint(region)} uses `dots_saveable`.",
                       [region.evidence("checkpoint with dots_saveable")])


def checkpoint_inside_grad(trace: Trace) -> CheckResult:
    region, (_, differentiated, _) = _best(trace)
    if region is None:
        return CheckResult(False, NO_REGION)
    if not differentiated:
        return CheckResult(False, f"The checkpointed region{line_hint(region)} is never differentiated: it "
                           "wraps the gradient computation instead of sitting inside it, so there is no backward "
                           "pass for it to save memory in. Apply `jax.checkpoint` to the block inside the loss "
                           "function you pass to `jax.value_and_grad`.",
                           [region.evidence("checkpoint outside autodiff")])
    return CheckResult(True, f"The checkpointed region{line_hint(region)} is differentiated: autodiff "
                       "recomputes it in the backward pass.", [region.evidence("differentiated checkpoint")])


def tanh_in_checkpoint(trace: Trace) -> CheckResult:
    region, (_, _, holds_tanh) = _best(trace)
    if region is None:
        return CheckResult(False, NO_REGION)
    if not holds_tanh:
        return CheckResult(False, f"The checkpointed region{line_hint(region)} does not contain the hidden "
                           "layer's `tanh`, so the activation is stored rather than recomputed. Checkpoint the "
                           "whole block, `x + tanh(x @ w1 + b1) @ w2 + b2`.",
                           [region.evidence("checkpoint without tanh")])
    tanh = next(e for e in body_eqns(region) if e.primitive == "tanh")
    return CheckResult(True, f"The checkpointed region{line_hint(region)} recomputes the `tanh`"
                       f"{line_hint(tanh)}.", [region.evidence("checkpoint"), tanh.evidence("tanh inside")])


CHECKS = {
    "checkpoint-dots-saveable": checkpoint_dots_saveable,
    "checkpoint-inside-grad": checkpoint_inside_grad,
    "tanh-in-checkpoint": tanh_in_checkpoint,
}
