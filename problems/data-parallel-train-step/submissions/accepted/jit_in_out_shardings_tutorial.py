"""The JAX sharding tutorial's idiom: `jax.jit` with `in_shardings` and `out_shardings`, a dataclass-free
params dict, the loss written with `optax`-style `jnp.mean` of squared errors; XLA inserts the all-reduce.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def mlp(params, x):
    h = jnp.tanh(jnp.dot(x, params["w1"]) + params["b1"])
    return jnp.dot(h, params["w2"]) + params["b2"]


def mse(params, x, y):
    return jnp.mean(jnp.square(mlp(params, x) - y))


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    rep = NamedSharding(mesh, P())
    data = NamedSharding(mesh, P("data", None))

    @functools.partial(jax.jit, in_shardings=(rep, data, data, None), out_shardings=(rep, rep))
    def update(params, x, y, lr):
        loss, grads = jax.value_and_grad(mse)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss

    new_params, loss = update(params, x, y, lr)
    return {"params": new_params, "loss": loss}
