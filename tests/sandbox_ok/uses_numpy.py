# problem: rematerialized-mlp-block
import math

import numpy as np
import jax
import jax.numpy as jnp

SCALE = np.float32(1.0) * math.prod([1])  # plain NumPy at import time


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"] * SCALE


def remat_mlp_block(params, x, y):
    assert np.asarray(x.shape).size == 2
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)

    def loss_fn(p):
        return jnp.mean((block(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}
