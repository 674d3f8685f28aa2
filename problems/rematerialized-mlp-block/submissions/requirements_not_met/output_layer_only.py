"""Only the output layer is checkpointed (with `dots_saveable`, inside `jax.value_and_grad`); the tanh hidden
layer is outside the region, so the region does not wrap the block including its hidden layer (row 1) and
holds no tanh (row 3), while the placement inside `value_and_grad` is right (row 2).

expect: requirements_not_met
fails: checkpoint-dots-saveable, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    @jax.checkpoint
    def unused(v):
        return v

    out_layer = jax.checkpoint(lambda h, p: x + h @ p["w2"] + p["b2"], policy=jax.checkpoint_policies.dots_saveable)

    def loss(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])  # outside the checkpointed region
        return jnp.mean((out_layer(h, p) - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
