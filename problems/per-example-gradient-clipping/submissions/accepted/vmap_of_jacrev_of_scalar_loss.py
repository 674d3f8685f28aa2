"""vmap of jacrev of a scalar loss.

expect: accepted
fails: none
"""
# jax.jacrev of one example's scalar loss is its gradient (one basis vector, one backward pass), and
# jax.vmap batches it: this is not the Jacobian of the vector of B losses.
import jax
import jax.numpy as jnp


def loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(jax.jacrev(loss), in_axes=(None, 0, 0))(params, x, y)
    norms = jnp.sqrt(jax.tree_util.tree_reduce(
        jnp.add, jax.tree.map(lambda g: jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1), grads)))
    factor = jnp.where(norms > max_norm, max_norm / norms, 1.0)
    return {"grads": jax.tree.map(lambda g: jnp.mean(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), 0), grads),
            "norms": norms}
