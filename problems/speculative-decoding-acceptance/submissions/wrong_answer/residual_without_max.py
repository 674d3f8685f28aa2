"""Normalises p - q itself, negative entries included, instead of max(0, p - q).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    p, q = target_probs[pos, draft_tokens], draft_probs[pos, draft_tokens]
    accepted = jax.random.uniform(key, (n,)) < jnp.minimum(1.0, p / q)
    a = jnp.sum(jnp.cumprod(accepted.astype(jnp.int32))).astype(jnp.int32)
    diff = target_probs[:n] - draft_probs
    rows = jnp.concatenate([diff / jnp.sum(jnp.abs(diff), 1, keepdims=True), target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
