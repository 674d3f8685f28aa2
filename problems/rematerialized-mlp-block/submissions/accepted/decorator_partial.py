"""Decorator partial.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.checkpoint, policy=jax.checkpoint_policies.dots_saveable)
def block(params, x):
    h = jnp.tanh(jnp.dot(x, params["w1"]) + params["b1"])
    return x + jnp.dot(h, params["w2"]) + params["b2"]


def loss(params, x, y):
    return jnp.mean(jnp.square(block(params, x) - y))


def remat_mlp_block(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return {"loss": value, "grads": grads}
