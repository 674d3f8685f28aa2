"""A scan over the positions and a sign-arithmetic test: right numbers, both requirements unmet.

expect: requirements_not_met
fails: uniforms-from-key, first-rejection-array-ops
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    flags = ((jnp.sign(ratio - jax.random.uniform(key, (n,))) + 1.0) / 2.0).astype(jnp.int32)

    def step(alive, f):
        alive = alive * f
        return alive, alive

    _, run = jax.lax.scan(step, jnp.int32(1), flags)
    a = jnp.sum(run).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
