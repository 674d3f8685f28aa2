"""Wrong answer: sqrt(d^2 + 1e-6), a common way to dodge the gradient at zero that moves every value: two
equal points come out 1e-3 apart.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2) + 1e-6)


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
