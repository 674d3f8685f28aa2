"""Everything saveable.

expect: requirements_not_met
fails: checkpoint-dots-saveable, tanh-in-checkpoint
"""
import jax, jax.numpy as jnp
def block(p, x):
    return x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
def remat_mlp_block(params, x, y):
    blk = jax.checkpoint(block, policy=jax.checkpoint_policies.everything_saveable)
    l, g = jax.value_and_grad(lambda p: jnp.mean((blk(p, x) - y) ** 2))(params)
    return {"loss": l, "grads": g}
