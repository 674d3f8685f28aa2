"""The function passed to `jax.value_and_grad` is itself the checkpointed one (the whole loss, the block's
tanh in it): the checkpoint is differentiated, so it counts as inside the function that is differentiated.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def loss_fn(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    out = x + hidden @ params["w2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


def remat_mlp_block(params, x, y):
    checkpointed = jax.checkpoint(loss_fn, policy=jax.checkpoint_policies.dots_saveable)
    loss, grads = jax.value_and_grad(checkpointed)(params, x, y)
    return {"loss": loss, "grads": grads}
