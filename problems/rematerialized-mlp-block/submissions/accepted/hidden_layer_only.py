"""Hidden layer only.

expect: accepted
fails: none
"""
import jax, jax.numpy as jnp
# only the hidden layer (matmul + bias + tanh) is checkpointed; the output layer is outside
hid = jax.checkpoint(lambda x, w1, b1: jnp.tanh(x @ w1 + b1), policy=jax.checkpoint_policies.dots_saveable)
def remat_mlp_block(params, x, y):
    def loss(p):
        return jnp.mean((x + hid(x, p["w1"], p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)
    l, g = jax.value_and_grad(loss)(params)
    return {"loss": l, "grads": g}
