"""The naive "before": the one-pair distance called in a Python loop over every pair of rows, the results
stacked. The loop runs while JAX traces, so the program holds one copy of the distance per pair."""
import jax.numpy as jnp


def distance(a, b):
    return jnp.sqrt(jnp.sum((a - b) ** 2))


def pairwise_distances(x, y):
    return jnp.stack([jnp.stack([distance(x[i], y[j]) for j in range(y.shape[0])]) for i in range(x.shape[0])])
