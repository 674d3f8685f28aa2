"""Loss divided by the batch size.

expect: wrong_answer
fails: none
"""
# Differentiates loss / B per example (the mean's share), so every per-example gradient and norm is B times
# too small, and too few are clipped.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]

    def loss(p, xn, yn):
        return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2 / n

    grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, x, y)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1), grads), "norms": norms}
