"""Softplus written as `log(1 + exp(z))`: exp overflows float32 for z above about 88.7, and the gradient and
product become NaN there (the hidden cases put logits up to the constraints' bound, about 144).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    def loss(w):
        z = x @ w
        return jnp.mean(jnp.log(1.0 + jnp.exp(z)) - y * z)

    g, hv = jax.jvp(jax.grad(loss), (w,), (v,))
    return {"grad": g, "hvp": hv}
