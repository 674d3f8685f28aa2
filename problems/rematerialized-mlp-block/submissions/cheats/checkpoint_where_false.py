"""`jnp.where(False, ...)` selects the plain block's output; the checkpointed block is selected away.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def _block(params, x):
    return x + jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    remat_block = jax.checkpoint(_block, policy=jax.checkpoint_policies.dots_saveable)
    use_remat = jnp.zeros((), bool)

    def loss(p):
        out = jnp.where(use_remat, remat_block(p, x), _block(p, x))
        return jnp.mean((out - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
