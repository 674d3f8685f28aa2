"""The residual normalised by its sum with no guard, as Hugging Face's speculative sampling writes it
(`p_prime.div_(p_prime.sum())`): right whenever some token has p > q, but when none does (p a few ulps
below q everywhere, through rounding) the sum is 0 and the row is 0 / 0 = NaN instead of p itself.

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
    p_prime = jnp.clip(target_probs[:n] - draft_probs, 0.0)
    p_prime = p_prime / p_prime.sum(axis=-1, keepdims=True)
    return {"num_accepted": a, "next_probs": jnp.concatenate([p_prime, target_probs[n:]])[a]}
