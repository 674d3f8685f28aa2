"""`shard_map` with its default `check_vma=True`: the gradient of a device's own loss with respect to
replicated parameters is already summed across devices by autodiff, and the `pmean` after it averages eight
equal sums. The step is 8 times too large (and the gradients are all-reduced twice).

expect: wrong_answer
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

    def per_device(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        grads = jax.lax.pmean(grads, "data")
        return jax.tree.map(lambda p, g: p - lr * g, params, grads), jax.lax.pmean(loss, "data")

    new, loss = jax.shard_map(per_device, mesh=mesh, in_specs=(P(), P("data"), P("data")),
                              out_specs=(P(), P()))(params, x, y)
    return {"params": new, "loss": loss}
