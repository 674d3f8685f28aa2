"""flax-style: a small module object with an `apply(variables, x)` method, and microbatches cut with
`lax.dynamic_slice_in_dim` from the step index, as maxtext-like training loops do.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


class MLP:
    def apply(self, variables, x):
        p = variables["params"]
        return jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def grad_accumulation(params, x, y, num_microbatches):
    model = MLP()
    size = x.shape[0] // num_microbatches

    def loss_fn(p, xb, yb):
        return jnp.sum((model.apply({"params": p}, xb) - yb) ** 2) / xb.shape[0]

    def body(carry, i):
        xb = lax.dynamic_slice_in_dim(x, i * size, size)
        yb = lax.dynamic_slice_in_dim(y, i * size, size)
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        return jax.tree.map(jnp.add, carry, (loss, grads)), None

    init = (jnp.float32(0), jax.tree.map(jnp.zeros_like, params))
    (loss, grads), _ = lax.scan(body, init, jnp.arange(num_microbatches))
    return {"loss": loss / num_microbatches, "grads": jax.tree.map(lambda g: g / num_microbatches, grads)}
