"""A `lax.scan` over the positions that carries "still accepting" and counts: right numbers, a loop.

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

    def step(carry, ok):
        alive, count = carry
        alive = alive & ok
        return (alive, count + alive.astype(jnp.int32)), None

    (_, a), _ = jax.lax.scan(step, (jnp.bool_(True), jnp.int32(0)), accepted)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
