"""The running AND of the flags with `lax.associative_scan`: no loop, but a parallel prefix written out in
about log2(n) levels of slices and concatenations, so the traced program grows with n (the requirement asks
for the same size for every n, which `jnp.cumprod`, one equation, gives).

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
    a = jnp.sum(jax.lax.associative_scan(jnp.logical_and, accepted), dtype=jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
