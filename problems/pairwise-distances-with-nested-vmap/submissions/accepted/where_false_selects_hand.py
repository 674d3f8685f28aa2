"""Cheat: `jnp.where` with a condition that is never true keeps the hand-broadcast answer and drops the
vmapped one.

The rows that decide are properties of the program, and this one computes every pair at once with no
loop: what `jax.vmap` traces to. The vmap rows are advice (they show what JAX recorded) and decide nothing.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    mapped = jax.vmap(jax.vmap(distance, (None, 0)), (0, None))(x, y)
    by_hand = jnp.sqrt(jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1))
    return jnp.where(jnp.isnan(mapped), mapped, by_hand)
