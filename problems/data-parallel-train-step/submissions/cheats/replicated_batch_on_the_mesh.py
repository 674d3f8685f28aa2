"""A mesh of 8 devices, but the batch replicated on it (`P()` for x and y too): every device computes the
whole batch's step, and no gradient is ever combined.

expect: requirements_not_met
fails: batch-sharded, gradients-all-reduced
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    rep = NamedSharding(mesh, P())

    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return {"params": jax.tree.map(lambda p, g: p - lr * g, params, grads), "loss": loss}

    return jax.jit(step, in_shardings=(rep, rep, rep), out_shardings=rep)(params, x, y)
