"""Ratio without min: `u < p / q`, the statement's test without its `min(1, .)` (u < 1, so the same test, and
the one elementwise comparison the requirement asks for); q = 0 gives +inf, accepted.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    rows = jnp.arange(n)
    ratio = target_probs[rows, draft_tokens] / draft_probs[rows, draft_tokens]
    accepted = jax.random.uniform(key, (n,)) < ratio
    a = jnp.argmin(jnp.append(accepted, False)).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(axis=1, keepdims=True)
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    return {"num_accepted": a, "next_probs": jnp.concatenate([residual, target_probs[n:]])[a]}
