"""optax's own `clip_by_global_norm`: `global_norm` as a sum of per-leaf sums, a `trigger`, and
`jax.lax.select(trigger, t, (t / g_norm) * max_norm)` mapped over the leaves.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def global_norm(updates):
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree_util.tree_leaves(updates)))


def clip_by_global_norm(grads, max_norm):
    g_norm = global_norm(grads)
    trigger = jnp.squeeze(g_norm < max_norm)

    def clip_fn(t):
        return jax.lax.select(jnp.broadcast_to(trigger, t.shape), t, (t / g_norm.astype(t.dtype)) * max_norm)

    return {"grads": jax.tree_util.tree_map(clip_fn, grads), "global_norm": g_norm}
