"""The clipping factor computed on the host with `io_callback` from the norm JAX computed.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    factor = io_callback(lambda n, c: np.asarray(1.0 if n < c else c / n, np.float32),
                         jax.ShapeDtypeStruct((), jnp.float32), norm, max_norm)
    return {"grads": jax.tree.map(lambda g: g * factor, grads), "global_norm": norm}
