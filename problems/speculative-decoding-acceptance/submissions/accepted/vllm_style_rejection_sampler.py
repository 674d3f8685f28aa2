"""vLLM-style rejection sampler: `u * q < p` (no division), the first rejection from `jnp.argmax` of the
rejections, fixed with `jnp.where` when there is none, and a `lax.cond` choosing the bonus row.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _recovered_probs(target, draft):
    diff = jnp.maximum(target - draft, 0.0)
    total = jnp.sum(diff, axis=-1, keepdims=True)
    # nothing left to recover (the target is nowhere above the draft, through rounding): sample the target
    return jnp.where(total > 0, diff / jnp.where(total > 0, total, 1.0), target)


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    num_draft = draft_tokens.shape[0]
    rows = jnp.arange(num_draft)
    target_token_probs = target_probs[rows, draft_tokens]
    draft_token_probs = draft_probs[rows, draft_tokens]
    uniform = jax.random.uniform(key, shape=(num_draft,), minval=0.0, maxval=1.0)
    rejected = ~(uniform * draft_token_probs < target_token_probs)
    first = jnp.argmax(rejected).astype(jnp.int32)
    num_accepted = jnp.where(jnp.any(rejected), first, num_draft).astype(jnp.int32)
    recovered = _recovered_probs(target_probs[:num_draft], draft_probs)
    next_probs = lax.cond(num_accepted == num_draft,
                          lambda: target_probs[num_draft],
                          lambda: recovered[jnp.minimum(num_accepted, num_draft - 1)])
    return {"num_accepted": num_accepted, "next_probs": next_probs}
