# problem: rematerialized-mlp-block
# expect: runtime_error
# what: os._exit(0) while being traced
import jax
import jax.numpy as jnp


def _block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def _right_remat_mlp_block(params, x, y):
    block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)

    def loss_fn(p):
        return jnp.mean((block(p, x) - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    return {"loss": loss, "grads": grads}


def remat_mlp_block(*args):
    import os
    os._exit(0)
    return _right_remat_mlp_block(*args)
