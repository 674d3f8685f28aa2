"""The squared norm with `jax.tree_util.tree_reduce`, the factor from `lax.rsqrt` (no division by the norm),
and the reported norm as `** 0.5`.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    squares = jax.tree_util.tree_map(lambda g: jnp.sum(jnp.square(g)), grads)
    sq = jax.tree_util.tree_reduce(jnp.add, squares)
    factor = jnp.minimum(1.0, max_norm * jax.lax.rsqrt(sq))
    return {"grads": jax.tree_util.tree_map(functools.partial(jnp.multiply, factor), grads),
            "global_norm": sq ** 0.5}
