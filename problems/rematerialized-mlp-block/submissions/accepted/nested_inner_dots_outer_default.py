"""Nested the other way round: an outer `jax.checkpoint` with the default policy around the loss, and the block
inside it checkpointed with `dots_saveable`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(lambda p: x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"],
                           policy=jax.checkpoint_policies.dots_saveable)

    @jax.checkpoint
    def loss(p):
        return jnp.mean((block(p) - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
