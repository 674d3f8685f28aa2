"""The real block is not checkpointed; a `dots_saveable` region holds a tanh of the output bias, added
times zero, so autodiff hands it a zero gradient.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax, jax.numpy as jnp
def block(p, x):
    return x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
# the real block is NOT checkpointed; a side region recomputes tanh of something irrelevant
def remat_mlp_block(params, x, y):
    side = jax.checkpoint(lambda z: jnp.tanh(z), policy=jax.checkpoint_policies.dots_saveable)
    def loss(p):
        return jnp.mean((block(p, x) - y) ** 2) + 0.0 * jnp.sum(side(p["b2"]))
    l, g = jax.value_and_grad(loss)(params)
    return {"loss": l, "grads": g}
