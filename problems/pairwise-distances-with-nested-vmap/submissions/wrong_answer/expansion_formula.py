"""Wrong answer, the classic one: |a|^2 + |b|^2 - 2 a.b inside the nested vmap. For nearby points with large
coordinates the subtraction cancels, leaving rounding noise that is often negative (sqrt gives nan).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(a @ a + b @ b - 2.0 * (a @ b))


def pairwise_distances(x, y):
    return jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
