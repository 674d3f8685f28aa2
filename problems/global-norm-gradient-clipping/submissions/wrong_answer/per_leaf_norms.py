"""Each leaf clipped by its own norm (`optax.clip_by_block_rms`-like thinking), not one global factor.

expect: wrong_answer
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    def clip_leaf(g):
        n = jnp.sqrt(jnp.sum(g * g))
        return jnp.where(n < max_norm, g, g / n * max_norm)

    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    return {"grads": jax.tree.map(clip_leaf, grads), "global_norm": norm}
