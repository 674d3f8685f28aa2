"""The loss averaged over the rows but summed over the K outputs: K times the loss asked for, and K times
the step (the hidden cases with K > 1 catch it).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean(jnp.sum((h @ params["w2"] + params["b2"] - y) ** 2, axis=-1))


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    rep, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))

    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return {"params": jax.tree.map(lambda p, g: p - lr * g, params, grads), "loss": loss}

    return jax.jit(step, in_shardings=(rep, data, data), out_shardings=rep)(params, x, y)
