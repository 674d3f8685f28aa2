"""`jax.vjp` (what `jax.grad` is built on) under `jax.jit`, with the checkpointed block as the function's
inner helper; the cotangent is seeded with one.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def remat_mlp_block(params, x, y):
    @jax.jit
    def step(p):
        def loss(q):
            def block(q):
                return x + jnp.tanh(x @ q["w1"] + q["b1"]) @ q["w2"] + q["b2"]
            out = jax.checkpoint(block, policy=jax.checkpoint_policies.checkpoint_dots)(q)
            return jnp.sum((out - y) ** 2) / y.size
        value, pullback = jax.vjp(loss, p)
        (grads,) = pullback(jnp.ones_like(value))
        return value, grads

    value, grads = step(params)
    return {"loss": value, "grads": grads}
