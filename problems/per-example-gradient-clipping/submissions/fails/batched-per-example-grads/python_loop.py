"""Python loop.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# Right numbers, but a Python loop calls jax.grad once per example: B backward passes in the program.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    clipped, norms = [], []
    for n in range(x.shape[0]):
        g = jax.grad(_loss)(params, x[n], y[n])
        norm = jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(g)))
        factor = max_norm / jnp.maximum(norm, max_norm)
        clipped.append(jax.tree.map(lambda leaf: leaf * factor, g))
        norms.append(norm)
    mean = jax.tree.map(lambda *leaves: sum(leaves) / len(leaves), *clipped)
    return {"grads": mean, "norms": jnp.stack(norms)}
