"""A data-parallel gradient, `pmean`ed across devices, multiplied by zero and added to the gradient of the
whole batch computed on every device; every label says all-reduce. `x` arrives split (XLA keeps the shard_map's placement for it) and is gathered back for the
whole-batch gradient.

expect: requirements_not_met
fails: gradients-all-reduced
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

    def all_reduce(params, x, y, xs, ys):
        with jax.named_scope("all-reduce"):
            loss, full = jax.value_and_grad(loss_fn)(params, x, y)
            local = jax.lax.pmean(jax.grad(loss_fn)(params, xs, ys), "data")
            grads = jax.tree.map(lambda f, l: f + 0.0 * l, full, local)
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), loss

    new, loss = jax.shard_map(all_reduce, mesh=mesh, in_specs=(P(), P(), P(), P("data"), P("data")),
                              out_specs=(P(), P()), check_vma=False)(params, x, y, x, y)
    return {"params": new, "loss": loss}
