"""Lax map one batch.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# `lax.map(..., batch_size=B)` with B the batch size: a loop (a `scan`) of one step that vmaps inside. The
# statement counts `lax.map` as a loop whatever its batch size, since any smaller batch size splits the
# examples into steps; write the `jax.vmap` directly.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    grads = jax.lax.map(lambda xy: jax.grad(_loss)(params, *xy), (x, y), batch_size=n)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
