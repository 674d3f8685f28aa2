"""The differences clamped from below at the smallest positive float instead of 0, as vLLM's first
rejection sampler did (`torch.clamp(difference, min=smallest_positive_value)`): indistinguishable while
some token has p > q, but when none does every token gets the same tiny weight and the row comes out
uniform, not p itself.

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
    f = jnp.maximum(target_probs[:n] - draft_probs, jnp.finfo(jnp.float32).tiny)
    recovered = f / jnp.sum(f, axis=-1, keepdims=True)
    return {"num_accepted": a, "next_probs": jnp.concatenate([recovered, target_probs[n:]])[a]}
