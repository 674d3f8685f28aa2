"""The gradients summed across devices, not averaged: 8 times the step.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, PartitionSpec as P


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]), ("data",))

    def per_device(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.psum(grads, "data")
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), jax.lax.pmean(loss, "data")

    new, loss = jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")), out_specs=(P(), P()),
                              check_vma=False)(params, x, y)
    return {"params": new, "loss": loss}
