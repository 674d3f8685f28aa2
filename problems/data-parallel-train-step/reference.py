import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    return jnp.mean((pred - y) ** 2)


def _step(params, x, y, lr):
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    new = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return {"params": new, "loss": loss}


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    replicated = NamedSharding(mesh, P())       # every device holds all of it
    batch = NamedSharding(mesh, P("data"))      # rows split over the 8 devices
    step = jax.jit(_step, in_shardings=(replicated, batch, batch, replicated), out_shardings=replicated)
    return step(params, x, y, lr)
