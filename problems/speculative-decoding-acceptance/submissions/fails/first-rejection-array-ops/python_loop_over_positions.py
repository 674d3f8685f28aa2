"""One vectorised comparison, then a Python loop over the positions that stops counting at the first
rejection: right numbers, but the traced program is written out once per position and grows with n.

expect: requirements_not_met
fails: first-rejection-array-ops
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    accepted = jax.random.uniform(key, (n,)) < ratio
    a, alive = jnp.int32(0), jnp.bool_(True)
    for i in range(n):
        alive = alive & accepted[i]
        a = a + alive.astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
