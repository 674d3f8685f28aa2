"""`jax.value_and_grad` runs through the checkpointed block, but the returned gradients are written out by hand
and the autodiff ones are only added times zero.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)
    value, auto = jax.value_and_grad(lambda p: jnp.mean((block(p, x) - y) ** 2))(params)

    h = jnp.tanh(x @ params["w1"] + params["b1"])
    g = 2.0 * (x + h @ params["w2"] + params["b2"] - y) / y.size
    dz = (g @ params["w2"].T) * (1.0 - h ** 2)
    hand = {"w1": x.T @ dz, "b1": dz.sum(0), "w2": h.T @ g, "b2": g.sum(0)}
    grads = jax.tree_util.tree_map(lambda a, b: a + 0.0 * b, hand, auto)
    return {"loss": value, "grads": grads}
