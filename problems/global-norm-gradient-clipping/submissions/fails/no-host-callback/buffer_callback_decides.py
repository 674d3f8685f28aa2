"""Whether to clip is decided in Python through `jax.experimental.buffer_callback`, which writes its answer
straight into the output buffer from the host (no `pure_callback` in sight): the host decides all the same.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.buffer_callback import buffer_callback


def _decide(ctx, out, norm, max_norm):
    np.from_dlpack(out)[...] = np.from_dlpack(norm) < np.from_dlpack(max_norm)


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    keep = buffer_callback(_decide, jax.ShapeDtypeStruct((), jnp.bool_))(norm, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.where(keep, g, g / norm * max_norm), grads), "global_norm": norm}
