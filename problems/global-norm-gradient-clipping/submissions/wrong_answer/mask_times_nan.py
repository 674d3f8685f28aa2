"""The choice made with a 0/1 mask, mask * clipped + (1 - mask) * g: on all-zero gradients the clipped
branch is 0 / 0 = NaN, and 0 * NaN is still NaN.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    mask = (norm >= max_norm).astype(jnp.float32)
    return {"grads": jax.tree.map(lambda g: mask * (g / norm * max_norm) + (1.0 - mask) * g, grads),
            "global_norm": norm}
