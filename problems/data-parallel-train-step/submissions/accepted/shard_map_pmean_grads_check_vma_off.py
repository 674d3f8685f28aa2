"""The classic pmap-era recipe in `shard_map` with `check_vma=False`: local loss and gradients, then one
`pmean` of the gradients and the loss (the tree of gradients all-reduced together).

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P

mesh = Mesh(np.array(jax.devices()[:8]), ("data",))


def loss_fn(params, batch):
    x, y = batch
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


@partial(jax.shard_map, mesh=mesh, in_specs=(P(), (P("data"), P("data")), P()), out_specs=(P(), P()),
         check_vma=False)
def sharded_update(params, batch, lr):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    loss, grads = jax.lax.pmean((loss, grads), axis_name="data")
    return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss


def train_step(params, x, y, lr):
    new, loss = sharded_update(params, (x, y), jnp.float32(lr))
    return {"params": new, "loss": loss}
