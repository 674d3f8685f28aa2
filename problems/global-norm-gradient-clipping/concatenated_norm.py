"""Set beside the reference in the insight: the norm taken of one concatenated vector
(`jnp.linalg.norm(jnp.concatenate(...))`), the leaves then scaled with `jax.tree.map`."""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.linalg.norm(jnp.concatenate([jnp.ravel(g) for g in jax.tree.leaves(grads)]))
    return {"grads": jax.tree.map(lambda g: jnp.where(norm < max_norm, g, g / norm * max_norm), grads),
            "global_norm": norm}
