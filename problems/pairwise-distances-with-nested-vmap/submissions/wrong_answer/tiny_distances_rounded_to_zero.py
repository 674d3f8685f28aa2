"""Wrong answer: distances below 1e-3 snapped to exactly 0, meant to make equal points come out 0 after a
noisy formula; two distinct points closer than 1e-3 (allowed: any float32 values) are then reported as one.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    d = jnp.sqrt(jnp.sum((a - b) ** 2))
    return jnp.where(d < 1e-3, 0.0, d)


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
