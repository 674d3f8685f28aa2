"""Flax's partitioning idiom in plain JAX: parameters carry their logical axes (`nn.with_partitioning`
writes them in metadata; here a dict beside them), a 2-D mesh ('data', 'model') whose model axis has size 1,
and one jitted update with the shardings derived from the metadata. The batch is split over all 8 devices.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

PARTITIONING = {"w1": (None, "model"), "b1": ("model",), "w2": ("model", None), "b2": (None,)}


class Dense:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return x @ self.w + self.b


def apply(params, x):
    return Dense(params["w2"], params["b2"])(jnp.tanh(Dense(params["w1"], params["b1"])(x)))


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(8, 1), ("data", "model"))
    param_sh = {k: NamedSharding(mesh, P(*axes)) for k, axes in PARTITIONING.items()}
    batch_sh = NamedSharding(mesh, P("data", None))

    def step(params, x, y):
        def loss_fn(p):
            return jnp.mean((apply(p, x) - y) ** 2)
        loss, g = jax.value_and_grad(loss_fn)(params)
        return {"params": {k: params[k] - lr * g[k] for k in params}, "loss": loss}

    out_sh = {"params": param_sh, "loss": NamedSharding(mesh, P())}
    return jax.jit(step, in_shardings=(param_sh, batch_sh, batch_sh), out_shardings=out_sh)(params, x, y)
