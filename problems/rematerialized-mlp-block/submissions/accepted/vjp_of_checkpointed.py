"""`jax.vjp` of a checkpointed loss, pulled back with 1: `jax.vjp` differentiates as `jax.grad` does, so the
checkpoint is inside the function that is differentiated.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def block(params, x):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    return x + hidden @ params["w2"] + params["b2"]


def remat_mlp_block(params, x, y):
    fn = jax.checkpoint(lambda p: jnp.mean((block(p, x) - y) ** 2), policy=jax.checkpoint_policies.dots_saveable)
    loss, pullback = jax.vjp(fn, params)
    (grads,) = pullback(jnp.ones_like(loss))
    return {"loss": loss, "grads": grads}
