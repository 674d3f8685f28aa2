"""A differentiated `dots_saveable` region holding a tanh and a matrix product of something else (the targets),
added with a weight that cancels; the real block runs outside any checkpoint.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    decoy = jax.checkpoint(lambda p, t: jnp.tanh(t @ p["w2"].T) @ p["w2"], policy=jax.checkpoint_policies.dots_saveable)

    def loss(p):
        out = x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        d = decoy(p, y)
        return jnp.mean((out + d - d - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
