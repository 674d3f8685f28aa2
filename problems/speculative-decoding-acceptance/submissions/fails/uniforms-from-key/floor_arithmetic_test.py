"""Right numbers, but the acceptance flags come from `-floor(u - ratio)` (1 exactly where u < ratio, 0 at
u == ratio too), arithmetic instead of one comparison of the uniforms with the ratios. (`floor(ratio - u) + 1`
is `u <= ratio`, which hidden case 17, u = 0 at a ratio of 0, catches as a wrong answer.)

expect: requirements_not_met
fails: uniforms-from-key
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    u = jax.random.uniform(key, (n,))
    flags = (-jnp.floor(u - ratio)).astype(jnp.int32)
    a = jnp.sum(jnp.cumprod(flags)).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
