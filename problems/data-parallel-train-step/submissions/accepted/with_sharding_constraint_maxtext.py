"""MaxText's way: no shardings on a jit of its own; the activations' and parameters' placements are stated
with `jax.lax.with_sharding_constraint` inside the step, by logical axis names mapped to mesh axes (written
here in plain JAX: `logical_to_mesh` is a dict lookup, as MaxText's `nn_partitioning` rules are).

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

RULES = {"batch": "data", "embed": None, "mlp": None, "out": None}


def logical(mesh, *axes):
    return NamedSharding(mesh, P(*(RULES[a] for a in axes)))


def train_step(params, x, y, lr):
    mesh = Mesh(np.array(jax.devices()[:8]).reshape(8), ("data",))
    x = jax.lax.with_sharding_constraint(x, logical(mesh, "batch", "embed"))
    y = jax.lax.with_sharding_constraint(y, logical(mesh, "batch", "out"))
    specs = {"w1": ("embed", "mlp"), "b1": ("mlp",), "w2": ("mlp", "out"), "b2": ("out",)}
    params = {k: jax.lax.with_sharding_constraint(v, logical(mesh, *specs[k])) for k, v in params.items()}

    def loss_fn(p):
        hidden = jnp.tanh(x @ p["w1"] + p["b1"])
        hidden = jax.lax.with_sharding_constraint(hidden, logical(mesh, "batch", "mlp"))
        return jnp.mean((hidden @ p["w2"] + p["b2"] - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(params)
    new = {k: jax.lax.with_sharding_constraint(params[k] - lr * grads[k], logical(mesh, *specs[k])) for k in params}
    return {"params": new, "loss": loss}
