"""Checkpoint around tanh only.

expect: requirements_not_met
fails: checkpoint-dots-saveable
"""
import jax, jax.numpy as jnp
def block(p, x):
    return x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
def remat_mlp_block(params, x, y):
    act = jax.checkpoint(jnp.tanh, policy=jax.checkpoint_policies.dots_saveable)
    def loss(p):
        out = x + act(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return jnp.mean((out - y) ** 2)
    l, g = jax.value_and_grad(loss)(params)
    return {"loss": l, "grads": g}
