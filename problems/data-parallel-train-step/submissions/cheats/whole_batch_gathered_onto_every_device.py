"""The batch arrives split, as asked, and is gathered back onto every device before the step: each device
then computes the whole batch (an all-gather, and 8 times the work).

expect: requirements_not_met
fails: gradients-all-reduced
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
        x = jax.lax.with_sharding_constraint(x, rep)
        y = jax.lax.with_sharding_constraint(y, rep)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return {"params": jax.tree.map(lambda p, g: p - lr * g, params, grads), "loss": loss}

    return jax.jit(step, in_shardings=(rep, data, data), out_shardings=rep)(params, x, y)
