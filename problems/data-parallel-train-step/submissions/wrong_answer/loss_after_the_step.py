"""The loss returned at the updated parameters, not at the ones given.

expect: wrong_answer
fails: none
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

    def step(params, x, y):
        grads = jax.grad(loss_fn)(params, x, y)
        new = jax.tree.map(lambda p, g: p - lr * g, params, grads)
        return {"params": new, "loss": loss_fn(new, x, y)}

    return jax.jit(step, in_shardings=(rep, data, data), out_shardings=rep)(params, x, y)
