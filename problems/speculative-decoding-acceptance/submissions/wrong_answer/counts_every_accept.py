"""Counts every position that passes its own test, not the leading run up to the first rejection. In
Example 3 exactly half of the positions pass, so when the grader flips every test result the (wrong) count
stays 2, and the probe cannot see that the comparison decides it: uniforms-from-key is reported unmet there.

expect: wrong_answer
fails: uniforms-from-key
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    p, q = target_probs[pos, draft_tokens], draft_probs[pos, draft_tokens]
    accepted = jax.random.uniform(key, (n,)) < jnp.minimum(1.0, p / q)
    a = jnp.sum(accepted).astype(jnp.int32)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    rows = jnp.concatenate([residual / residual.sum(1, keepdims=True), target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
