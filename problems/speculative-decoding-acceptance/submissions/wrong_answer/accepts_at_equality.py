"""Accepts when u equals the ratio (`u <= p / q`): the test is strict, u < min(1, p / q). Hidden case 17
(its key's first uniform is exactly 0.0, at a draft whose ratio is 0) catches it.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    u = jax.random.uniform(key, (n,))
    a = jnp.sum(jnp.cumprod((u <= ratio).astype(jnp.int32))).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
