"""Reshape scan tuple carry.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def mse(params, xb, yb):
    h = jnp.tanh(jnp.dot(xb, params["w1"]) + params["b1"])
    out = jnp.dot(h, params["w2"]) + params["b2"]
    return jnp.mean(jnp.sum((out - yb) ** 2, axis=1))


def grad_accumulation(params, x, y, num_microbatches):
    xs = x.reshape(num_microbatches, -1, x.shape[1])
    ys = y.reshape(num_microbatches, -1, y.shape[1])

    def body(carry, mb):
        total, acc = carry
        value, grads = jax.value_and_grad(mse)(params, mb[0], mb[1])
        return (total + value, jax.tree_util.tree_map(lambda a, g: a + g, acc, grads)), value

    init = (jnp.zeros((), jnp.float32), jax.tree_util.tree_map(jnp.zeros_like, params))
    (total, acc), _ = jax.lax.scan(body, init, (xs, ys))
    return {"loss": total / num_microbatches,
            "grads": jax.tree_util.tree_map(lambda g: g / num_microbatches, acc)}
