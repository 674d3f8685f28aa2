"""Only the activation `jnp.tanh` is checkpointed with `dots_saveable`: the region is differentiated and
recomputes the hidden tanh (rows 2 and 3 hold), but the matrix product is outside it, so it does not wrap the
function that computes the block and the policy has no product to save.

expect: requirements_not_met
fails: checkpoint-dots-saveable,tanh-in-checkpoint
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
