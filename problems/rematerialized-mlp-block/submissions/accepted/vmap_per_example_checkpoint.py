"""The block written for one example, checkpointed, and batched with `jax.vmap` inside the loss.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    @jax.checkpoint
    def _unused(v):  # a second, unused helper is harmless: the required region is the one below
        return v

    def one(p, xi):
        return xi + jnp.dot(jnp.tanh(jnp.dot(xi, p["w1"]) + p["b1"]), p["w2"]) + p["b2"]

    one = jax.checkpoint(one, policy=jax.checkpoint_policies.dots_saveable)
    batched = jax.vmap(one, in_axes=(None, 0))

    def loss(p):
        return jnp.mean(jnp.square(batched(p, x) - y))

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
