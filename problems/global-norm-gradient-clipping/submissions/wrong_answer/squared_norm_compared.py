"""The squared norm compared with max_norm (the square root taken only for the factor): clips whenever the
squared norm passes the threshold. The decision then comes from the squared norm, around the root.

expect: wrong_answer
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    sq = sum(jnp.sum(g * g) for g in jax.tree.leaves(grads))
    norm = jnp.sqrt(sq)
    return {"grads": jax.tree.map(lambda g: jnp.where(sq < max_norm, g, g / norm * max_norm), grads),
            "global_norm": norm}
