"""jacfwd of the losses.

expect: requirements_not_met
fails: no-batch-jacobian
"""
# jax.jacfwd of the B per-example losses: no backward pass at all, and one tangent per parameter pushed
# forward through the whole batch.
import jax
import jax.numpy as jnp


def clipped_mean_grad(params, x, y, max_norm):
    def losses(p):
        return (jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2

    grads = jax.jacfwd(losses)(params)
    n = x.shape[0]
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
