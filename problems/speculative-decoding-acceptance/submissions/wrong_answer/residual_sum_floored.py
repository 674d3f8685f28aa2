"""The residual's sum floored at a tiny number to avoid dividing by zero (`/ jnp.maximum(total, 1e-12)`):
no NaN, but when no token has p > q the row stays all zeros, which is no distribution; the statement
asks for p itself there.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    positions = jnp.arange(n)
    p = target_probs[positions, draft_tokens]
    q = draft_probs[positions, draft_tokens]
    accepted = jax.random.uniform(key, (n,)) < jnp.minimum(1.0, p / q)
    a = jnp.sum(jnp.cumprod(accepted.astype(jnp.int32))).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    residual = residual / jnp.maximum(residual.sum(axis=1, keepdims=True), 1e-12)
    return {"num_accepted": a, "next_probs": jnp.concatenate([residual, target_probs[n:]])[a]}
