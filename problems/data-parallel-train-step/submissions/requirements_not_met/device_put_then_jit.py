"""The eager tutorial's idiom, `jax.device_put` the batch to `P("data")` and call a plain `jax.jit`: under
tracing `device_put` splits nothing, so the jitted step computes the whole batch on every device.

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


@jax.jit
def step(params, x, y, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    return {"params": jax.tree.map(lambda p, g: p - lr * g, params, grads), "loss": loss}


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))
    x = jax.device_put(x, NamedSharding(mesh, P("data")))
    y = jax.device_put(y, NamedSharding(mesh, P("data")))
    params = jax.device_put(params, NamedSharding(mesh, P()))
    return step(params, x, y, lr)
