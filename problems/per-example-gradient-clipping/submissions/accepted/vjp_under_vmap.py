"""vjp under vmap.

expect: accepted
fails: none
"""
# Each example's gradient is the pullback of its loss at cotangent 1.0, from jax.vjp, and jax.vmap runs
# that for the whole batch at once.
import jax
import jax.numpy as jnp


def loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def per_example_grad(params, xn, yn):
    value, pullback = jax.vjp(lambda p: loss(p, xn, yn), params)
    (g,) = pullback(jnp.ones_like(value))
    return g


def clipped_mean_grad(params, x, y, max_norm):
    grads = jax.vmap(per_example_grad, in_axes=(None, 0, 0))(params, x, y)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(x.shape[0], -1) ** 2, axis=-1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.einsum("b,b...->...", factor, g) / x.shape[0], grads),
            "norms": norms}
