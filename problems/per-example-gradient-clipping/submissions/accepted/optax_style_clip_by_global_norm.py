"""optax style clip_by_global_norm.

expect: accepted
fails: none
"""
# In the style of optax: a `global_norm` and a `clip_by_global_norm` transform on one pytree of updates
# (jnp.where(norm < max_norm, g, g / norm * max_norm), as optax writes it), applied per example with
# jax.vmap to the vmapped gradients; functools.partial fixes the threshold.
import functools

import jax
import jax.numpy as jnp


def global_norm(updates):
    return jnp.sqrt(sum(jnp.sum(jnp.square(u)) for u in jax.tree_util.tree_leaves(updates)))


def clip_by_global_norm(updates, max_norm):
    g_norm = global_norm(updates)
    trigger = jnp.squeeze(g_norm < max_norm)
    safe = jnp.where(trigger, 1.0, g_norm)
    return jax.tree_util.tree_map(lambda t: jnp.where(trigger, t, (t / safe) * max_norm), updates), g_norm


def loss_fn(params, xn, yn):
    pred = jnp.tanh(xn @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"]
    return jnp.square(pred - yn)


def clipped_mean_grad(params, x, y, max_norm):
    per_example = jax.vmap(jax.grad(loss_fn), in_axes=(None, 0, 0))(params, x, y)
    clip = functools.partial(clip_by_global_norm, max_norm=max_norm)
    clipped, norms = jax.vmap(clip)(per_example)
    return {"grads": jax.tree_util.tree_map(lambda t: jnp.mean(t, axis=0), clipped), "norms": norms}
