"""The first rejection as `jnp.argmax(~accepted)`, forgetting that it is 0, not n, when nothing was rejected.

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
    a = jnp.argmax(~accepted).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    rows = jnp.concatenate([residual / residual.sum(1, keepdims=True), target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
