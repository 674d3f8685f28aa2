"""The tempting shortcut: the Jacobian of the vector of B per-example losses (`jax.jacrev`). It pushes B basis
vectors through the whole batch, so its backward pass carries arrays with two axes of length B."""
import jax
import jax.numpy as jnp


def _losses(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return (hidden @ params["w2"] + params["b2"] - y) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.jacrev(_losses)(params, x, y)
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    norms = jnp.sqrt(sum(squares))
    factor = max_norm / jnp.maximum(norms, max_norm)

    def clip_and_average(g):
        return jnp.mean(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), axis=0)

    return {"grads": jax.tree.map(clip_and_average, grads), "norms": norms}
