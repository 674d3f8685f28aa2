"""flax style module apply.

expect: accepted
fails: none
"""
# In the style of flax: a module object whose `apply(variables, inputs)` runs the network, a loss_fn that
# returns (loss, aux), and jax.vmap(jax.value_and_grad(loss_fn, has_aux=True)) over the batch.
import jax
import jax.numpy as jnp


class MLP:
    def apply(self, variables, inputs):
        params = variables["params"]
        h = jnp.tanh(jnp.dot(inputs, params["w1"]) + params["b1"])
        return jnp.dot(h, params["w2"]) + params["b2"]


model = MLP()


def loss_fn(params, xn, yn):
    pred = model.apply({"params": params}, xn)
    return (pred - yn) ** 2, pred


def clipped_mean_grad(params, x, y, max_norm):
    grad_fn = jax.vmap(jax.value_and_grad(loss_fn, has_aux=True), in_axes=(None, 0, 0))
    (_, _), grads = grad_fn(params, x, y)
    flat = jnp.concatenate([g.reshape(x.shape[0], -1) for g in jax.tree_util.tree_leaves(grads)], axis=1)
    norms = jnp.linalg.norm(flat, axis=1)
    scale = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree_util.tree_map(lambda g: jnp.tensordot(scale, g, axes=1) / x.shape[0], grads),
            "norms": norms}
