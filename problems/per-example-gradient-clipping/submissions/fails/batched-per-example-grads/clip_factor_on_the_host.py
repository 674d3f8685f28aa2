"""The per-example gradients come from one `vmap(grad)`, but whether and how much to clip each example is
decided in NumPy through `jax.pure_callback`: right numbers, but the clipping runs outside the traced
program, where the grader cannot see it.

expect: requirements_not_met
fails: batched-per-example-grads
"""
import jax
import jax.numpy as jnp
import numpy as np


def _loss(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return (hidden @ params["w2"] + params["b2"] - y) ** 2


def _factor(norms, max_norm):
    return np.where(norms > max_norm, max_norm / np.maximum(norms, 1e-30), 1.0).astype(np.float32)


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    norms = jnp.sqrt(sum(squares))
    factor = jax.pure_callback(_factor, jax.ShapeDtypeStruct(norms.shape, jnp.float32), norms, max_norm)

    def clip_and_average(g):
        return jnp.mean(g * factor.reshape((-1,) + (1,) * (g.ndim - 1)), axis=0)

    return {"grads": jax.tree.map(clip_and_average, grads), "norms": norms}
