"""Tree util style.

expect: accepted
fails: none
"""
# vmap of value_and_grad over a per-example loss, norms with tree_util, clipping with jnp.minimum.
import jax
import jax.numpy as jnp
from jax import tree_util


def loss(params, xn, yn):
    pred = jnp.dot(jnp.tanh(jnp.dot(xn, params["w1"]) + params["b1"]), params["w2"]) + params["b2"]
    return jnp.square(pred - yn)


def clipped_mean_grad(params, x, y, max_norm):
    _, grads = jax.vmap(jax.value_and_grad(loss), in_axes=(None, 0, 0))(params, x, y)
    sq = tree_util.tree_map(lambda g: jnp.sum(jnp.square(g), axis=tuple(range(1, g.ndim))), grads)
    norms = jnp.sqrt(tree_util.tree_reduce(jnp.add, sq))
    scale = jnp.minimum(1.0, max_norm / jnp.maximum(norms, 1e-30))
    clipped = tree_util.tree_map(lambda g: jnp.einsum("b,b...->...", scale, g) / x.shape[0], grads)
    return {"grads": clipped, "norms": norms}
