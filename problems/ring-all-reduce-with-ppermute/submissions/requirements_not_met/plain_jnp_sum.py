"""`jnp.sum` on one device, repeated n times: no devices, no ring.

expect: requirements_not_met
fails: shard-map-rows, ring-of-ppermutes
"""
import jax.numpy as jnp


def ring_all_reduce(x):
    return jnp.broadcast_to(jnp.sum(x, axis=0), x.shape)
