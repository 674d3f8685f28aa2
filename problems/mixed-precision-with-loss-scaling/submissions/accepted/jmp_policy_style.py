"""Written the way DeepMind's `jmp` library is used (jmp is not installed here): a Policy casts the
parameters and inputs to the compute dtype inside the loss, a StaticLossScale scales the loss and unscales
the gradients, `all_finite` tests them and `select_tree` keeps the old parameters when they overflow.

expect: accepted
fails: none
"""
from typing import NamedTuple

import jax
import jax.numpy as jnp


class Policy(NamedTuple):
    param_dtype: jnp.dtype
    compute_dtype: jnp.dtype
    output_dtype: jnp.dtype

    def cast_to_compute(self, tree):
        return jax.tree.map(lambda a: a.astype(self.compute_dtype), tree)

    def cast_to_output(self, tree):
        return jax.tree.map(lambda a: a.astype(self.output_dtype), tree)


class StaticLossScale(NamedTuple):
    loss_scale: jnp.ndarray

    def scale(self, tree):
        return jax.tree.map(lambda a: a * self.loss_scale, tree)

    def unscale(self, tree):
        inv = 1.0 / self.loss_scale
        return jax.tree.map(lambda a: a * inv, tree)


def all_finite(tree):
    leaves = [jnp.all(jnp.isfinite(a)) for a in jax.tree.leaves(tree)]
    return jnp.stack(leaves).all()


def select_tree(pred, a, b):
    return jax.tree.map(lambda x, y: jax.lax.select(pred, x, y), a, b)


def mixed_precision_step(params, x, y, loss_scale, lr):
    policy = Policy(jnp.float32, jnp.float16, jnp.float32)
    scaler = StaticLossScale(jnp.float32(loss_scale))

    def loss_fn(p):
        p, xc = policy.cast_to_compute((p, x))
        h = jnp.tanh(xc @ p["w1"] + p["b1"])
        out = policy.cast_to_output(h @ p["w2"] + p["b2"])
        loss = jnp.mean((out - y) ** 2)
        return scaler.scale(loss), loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = scaler.unscale(grads)
    finite = all_finite(grads)
    new = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return {"params": select_tree(finite, new, params), "loss": loss, "applied": finite}
