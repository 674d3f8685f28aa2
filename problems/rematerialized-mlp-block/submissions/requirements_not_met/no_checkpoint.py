"""No checkpoint.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    def loss(p):
        out = x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return jnp.mean((out - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
