"""The gradients from `jax.jacfwd`: the `dots_saveable` region holding the tanh is differentiated, but in
forward mode, which has no backward pass to save memory in, and not by `jax.grad`/`jax.value_and_grad`.

expect: requirements_not_met
fails: checkpoint-inside-grad,tanh-in-checkpoint
"""
import jax, jax.numpy as jnp
def block(p, x):
    return x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
def remat_mlp_block(params, x, y):
    blk = jax.checkpoint(block, policy=jax.checkpoint_policies.dots_saveable)
    loss = lambda p: jnp.mean((blk(p, x) - y) ** 2)
    return {"loss": loss(params), "grads": jax.jacfwd(loss)(params)}
