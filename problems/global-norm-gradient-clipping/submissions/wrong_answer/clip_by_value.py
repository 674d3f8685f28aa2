"""Every value clipped to [-max_norm, max_norm] (`optax.clip`), which changes the gradient's direction; the
global norm is only reported, it clips nothing.

expect: wrong_answer
fails: one-global-norm
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(sum(jnp.sum(g * g) for g in jax.tree.leaves(grads)))
    return {"grads": jax.tree.map(lambda g: jnp.clip(g, -max_norm, max_norm), grads), "global_norm": norm}
