"""Mean over batch only.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    block = jax.checkpoint(lambda p: x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"],
                           policy=jax.checkpoint_policies.dots_saveable)

    def loss(p):
        return jnp.sum((block(p) - y) ** 2) / x.shape[0]  # divides by B, not B * D

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
