"""The `shard_map` tutorial's data parallelism: each device takes its rows, the loss is averaged across
devices with `pmean`, and differentiating that loss averages the gradients (autodiff inserts the psum).

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def local_loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))

    def per_device(params, x, y):
        loss, grads = jax.value_and_grad(lambda p: jax.lax.pmean(local_loss(p, x, y), "data"))(params)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss

    new, loss = jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                              out_specs=(P(), P()))(params, x, y)
    return {"params": new, "loss": loss}
