"""The checkpointed block is called, its result is thrown away, and the loss uses a plain copy of the block.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    remat_block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)

    def loss(p):
        _ = remat_block(p, x)  # computed, never used
        return jnp.mean((_block(p, x) - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
