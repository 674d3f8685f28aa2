"""The checkpoint wraps `jax.value_and_grad` instead of sitting inside the differentiated function: the
region holds the block (row 1), but it is never differentiated (rows 2 and 3).

expect: requirements_not_met
fails: checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _loss(params, x, y):
    out = x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


def remat_mlp_block(params, x, y):
    step = jax.checkpoint(jax.value_and_grad(_loss), policy=jax.checkpoint_policies.dots_saveable)
    value, grads = step(params, x, y)
    return {"loss": value, "grads": grads}
