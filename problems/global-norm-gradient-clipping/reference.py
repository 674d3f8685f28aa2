import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    g_norm = jnp.sqrt(sum(jnp.sum(g * g) for g in leaves))
    trigger = g_norm < max_norm
    clipped = jax.tree.map(lambda g: jnp.where(trigger, g, (g / g_norm) * max_norm), grads)
    return {"grads": clipped, "global_norm": g_norm}
