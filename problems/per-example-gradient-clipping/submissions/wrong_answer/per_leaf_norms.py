"""Per leaf norms.

expect: wrong_answer
fails: none
"""
# Clips each leaf to max_norm separately instead of using one global norm per example.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    n = x.shape[0]

    def clip_leaf(g):
        norm = jnp.sqrt(jnp.sum(g.reshape(n, -1) ** 2, axis=1))
        factor = max_norm / jnp.maximum(norm, max_norm)
        return jnp.mean(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), axis=0)

    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    return {"grads": jax.tree.map(clip_leaf, grads), "norms": norms}
