"""A data-parallel step whose updated `w1` is handed back split by columns over the devices
(`out_shardings` with `P(None, "data")`): each device keeps only its slice of the new parameters.

expect: requirements_not_met
fails: params-replicated
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
    rep, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    out = {"params": {"w1": NamedSharding(mesh, P(None, "data")), "b1": rep, "w2": rep, "b2": rep}, "loss": rep}

    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return {"params": jax.tree.map(lambda p, g: p - lr * g, params, grads), "loss": loss}

    return jax.jit(step, in_shardings=(rep, data, data), out_shardings=out)(params, x, y)
