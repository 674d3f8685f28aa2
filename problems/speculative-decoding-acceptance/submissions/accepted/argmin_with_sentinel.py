"""The first rejection as `jnp.argmin` of the acceptance flags with a `False` appended after the last
position, which gives n when every draft is accepted; indexing with `jnp.take_along_axis`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n, v = draft_probs.shape
    idx = draft_tokens[:, None]
    p = jnp.take_along_axis(target_probs[:n], idx, axis=1)[:, 0]
    q = jnp.take_along_axis(draft_probs, idx, axis=1)[:, 0]
    u = jax.random.uniform(key, (n,))
    accepted = u < jnp.minimum(1.0, p / q)
    a = jnp.argmin(jnp.append(accepted, False)).astype(jnp.int32)
    residual = jnp.clip(target_probs[:n] - draft_probs, 0.0, None)
    total = residual.sum(axis=-1, keepdims=True)
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    return {"num_accepted": a, "next_probs": jnp.concatenate([residual, target_probs[-1:]])[a]}
