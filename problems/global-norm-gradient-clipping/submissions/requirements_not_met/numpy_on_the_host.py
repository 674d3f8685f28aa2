"""The whole clipping done in NumPy on the host, one `pure_callback` over every leaf.

expect: requirements_not_met
fails: one-global-norm, no-host-callback
"""
import jax
import numpy as np


def _host(max_norm, *leaves):
    norm = np.sqrt(sum(np.sum(np.square(x, dtype=np.float32)) for x in leaves)).astype(np.float32)
    factor = np.float32(1.0) if norm < max_norm else np.float32(max_norm) / norm
    return [np.asarray(x * factor if norm >= max_norm else x, np.float32) for x in leaves] + [norm]


def clip_by_global_norm(grads, max_norm):
    leaves, treedef = jax.tree.flatten(grads)
    shapes = [jax.ShapeDtypeStruct(x.shape, x.dtype) for x in leaves] + [jax.ShapeDtypeStruct((), leaves[0].dtype)]
    out = jax.pure_callback(_host, shapes, max_norm, *leaves)
    return {"grads": treedef.unflatten(out[:-1]), "global_norm": out[-1]}
