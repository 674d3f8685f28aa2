"""Loss row in loop.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# Right numbers, but a Python loop differentiates the i-th entry of the batch's losses, once per example:
# B backward passes, each one over the whole batch.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    def losses(p):
        return (jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2

    n = x.shape[0]
    clipped, norms = [], []
    for i in range(n):
        g = jax.grad(lambda p: losses(p)[i])(params)
        norm = jnp.sqrt(sum(jnp.sum(leaf ** 2) for leaf in jax.tree.leaves(g)))
        clipped.append(jax.tree.map(lambda leaf: leaf * max_norm / jnp.maximum(norm, max_norm), g))
        norms.append(norm)
    return {"grads": jax.tree.map(lambda *ls: sum(ls) / n, *clipped), "norms": jnp.stack(norms)}
