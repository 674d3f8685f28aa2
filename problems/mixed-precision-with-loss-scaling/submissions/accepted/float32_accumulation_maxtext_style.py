"""Written as maxtext writes its dense layers (maxtext is not installed here): float16 operands with
`preferred_element_type=jnp.float32`, so the products accumulate in float32 and the layer's result is cast
back to the compute dtype. The global gradient norm (`jnp.sqrt` of a sum of squares, as optax's
`global_norm`) is finite exactly when every gradient is.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp

COMPUTE = jnp.float16


def dense(x, kernel, bias):
    y = jax.lax.dot_general(x, kernel.astype(COMPUTE), (((x.ndim - 1,), (0,)), ((), ())),
                            preferred_element_type=jnp.float32)
    return (y + bias).astype(COMPUTE)


def loss_fn(params, x, y, loss_scale):
    h = jnp.tanh(dense(x.astype(COMPUTE), params["w1"], params["b1"]))
    out = dense(h, params["w2"], params["b2"]).astype(jnp.float32)
    loss = jnp.mean((out - y) ** 2)
    return loss * loss_scale, loss


def global_norm(tree):
    return jnp.sqrt(sum(jnp.sum(jnp.square(g)) for g in jax.tree_util.tree_leaves(tree)))


def mixed_precision_step(params, x, y, loss_scale, lr):
    grad_fn = jax.value_and_grad(functools.partial(loss_fn, x=x, y=y, loss_scale=loss_scale), has_aux=True)
    (_, loss), grads = grad_fn(params)
    grads = jax.tree_util.tree_map(lambda g: g / loss_scale, grads)
    ok = jnp.isfinite(global_norm(grads))
    new = jax.tree_util.tree_map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
