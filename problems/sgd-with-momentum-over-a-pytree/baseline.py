"""The naive "before" the insight compares with (insight.toml's [baseline]): every tree flattened into one
vector with `jax.flatten_util.ravel_pytree`, updated there, and split back. Same entry function and
signature as reference.py."""
from jax.flatten_util import ravel_pytree


def sgd_momentum(params, grads, velocity, lr, momentum):
    flat_p, unravel = ravel_pytree(params)
    flat_v = momentum * ravel_pytree(velocity)[0] + ravel_pytree(grads)[0]
    return {"params": unravel(flat_p - lr * flat_v), "velocity": unravel(flat_v)}
