"""jacrev times zero next to vmap of grad.

expect: requirements_not_met
fails: batched-per-example-grads, no-batch-jacobian
"""
# The answer comes from vmap(grad), but jax.jacrev of the B losses is also computed and added with weight 0:
# the Jacobian's B basis vectors still run through the whole batch, and it is a second backward pass.
import jax
import jax.numpy as jnp


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    n = x.shape[0]
    grads = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    jac = jax.jacrev(lambda p: jax.vmap(_loss, in_axes=(None, 0, 0))(p, x, y))(params)
    grads = jax.tree.map(lambda g, j: g + 0.0 * j, grads, jac)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(n, -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / n, grads), "norms": norms}
