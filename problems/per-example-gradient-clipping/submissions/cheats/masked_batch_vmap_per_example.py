"""A masked batch, vmapped, once per example.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# A Python loop runs the batched vmap(grad) B times, each time on the whole batch with every example but
# one zeroed out, and keeps that example's row: every pass is batched, but there are B of them.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    grads = None
    for i in range(n):
        mask = (jnp.arange(n) == i).astype(x.dtype)
        g = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x * mask[:, None], y * mask)
        g = jax.tree.map(lambda leaf: leaf * mask.reshape((-1,) + (1,) * (leaf.ndim - 1)), g)
        grads = g if grads is None else jax.tree.map(jnp.add, grads, g)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
