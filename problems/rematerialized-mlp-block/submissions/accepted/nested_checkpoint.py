"""Nested checkpoint.

expect: accepted
fails: none
"""
import jax, jax.numpy as jnp
def hidden(p, x):
    return jnp.tanh(x @ p["w1"] + p["b1"])
def block(p, x):
    return x + jax.checkpoint(hidden)(p, x) @ p["w2"] + p["b2"]
def remat_mlp_block(params, x, y):
    blk = jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)
    l, g = jax.value_and_grad(lambda p: jnp.mean((blk(p, x) - y) ** 2))(params)
    return {"loss": l, "grads": g}
