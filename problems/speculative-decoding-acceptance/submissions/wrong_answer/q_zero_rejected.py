"""Guards the division by treating q_i(x_i) = 0 as a rejection, where the ratio is +inf and the draft must be
accepted.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    p, q = target_probs[pos, draft_tokens], draft_probs[pos, draft_tokens]
    ratio = jnp.where(q > 0, p / jnp.where(q > 0, q, 1.0), 0.0)
    accepted = jax.random.uniform(key, (n,)) < jnp.minimum(1.0, ratio)
    a = jnp.sum(jnp.cumprod(accepted.astype(jnp.int32))).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    rows = jnp.concatenate([residual / residual.sum(1, keepdims=True), target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
