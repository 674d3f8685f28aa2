"""Only the loss is computed data-parallel (a `pmean` of the devices' losses); the gradients come from the
whole batch on every device. `x` arrives split (XLA keeps the shard_map's placement) and is gathered back for the
gradients.

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
    params = jax.lax.with_sharding_constraint(params, NamedSharding(mesh, P()))
    grads = jax.grad(loss_fn)(params, jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P())),
                              jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P())))
    loss = jax.shard_map(lambda p, a, b: jax.lax.pmean(loss_fn(p, a, b), "data"), mesh=mesh,
                         in_specs=(P(), P("data"), P("data")), out_specs=P())(params, x, y)
    new = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return {"params": jax.lax.with_sharding_constraint(new, NamedSharding(mesh, P())), "loss": loss}
