"""A policy function of its own that saves exactly what `dots_saveable` saves (the results of `dot_general`).
The requirement names `jax.checkpoint_policies.dots_saveable`; a look-alike policy is not that object, and
the grader cannot tell in general that a function decides the same way, so it does not count.

expect: requirements_not_met
fails: checkpoint-dots-saveable, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def save_dots(prim, *args, **params):
    return prim.name == "dot_general"


def _block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(_block, policy=save_dots)
    value, grads = jax.value_and_grad(lambda p: jnp.mean((block(p, x) - y) ** 2))(params)
    return {"loss": value, "grads": grads}
