"""maxtext/optax-style: clipping written as a `GradientTransformation` (`init`/`update` with an empty state)
under `jax.jit`, the norm returned separately as training loops log it.

expect: accepted
fails: none
"""
from typing import NamedTuple

import jax
import jax.numpy as jnp


class EmptyState(NamedTuple):
    pass


class GradientTransformation(NamedTuple):
    init: object
    update: object


def clip_by_global_norm_transform(max_norm):
    def update_fn(updates, state, params=None):
        g_norm = optax_global_norm(updates)
        trigger = g_norm < max_norm
        updates = jax.tree_util.tree_map(lambda t: jnp.where(trigger, t, (t / g_norm) * max_norm), updates)
        return updates, state

    return GradientTransformation(lambda params: EmptyState(), update_fn)


def optax_global_norm(updates):
    return jnp.sqrt(sum(jnp.sum(jnp.abs(x) ** 2) for x in jax.tree_util.tree_leaves(updates)))


@jax.jit
def clip_by_global_norm(grads, max_norm):
    tx = clip_by_global_norm_transform(max_norm)
    clipped, _ = tx.update(grads, tx.init(None))
    return {"grads": clipped, "global_norm": optax_global_norm(grads)}
