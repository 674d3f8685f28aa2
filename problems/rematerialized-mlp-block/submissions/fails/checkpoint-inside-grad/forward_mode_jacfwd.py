"""Forward mode jacfwd.

expect: requirements_not_met
fails: checkpoint-inside-grad
"""
import jax, jax.numpy as jnp
def block(p, x):
    return x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
def remat_mlp_block(params, x, y):
    blk = jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)
    loss = lambda p: jnp.mean((blk(p, x) - y) ** 2)
    return {"loss": loss(params), "grads": jax.jacfwd(loss)(params)}
