"""The numbers are right, but the clipped gradients are rebuilt from flat leaves with the tuple-making helper
of a hand-written tree walk: a list in `grads` comes back as a tuple ("lists stay lists" is in the statement).

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def _clip(tree, scale):
    if isinstance(tree, dict):
        return {k: _clip(v, scale) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return tuple(_clip(v, scale) for v in tree)
    return tree * scale


def _sq(tree):
    if isinstance(tree, dict):
        return sum(_sq(v) for v in tree.values())
    if isinstance(tree, (list, tuple)):
        return sum(_sq(v) for v in tree)
    return jnp.sum(tree * tree)


def clip_by_global_norm(grads, max_norm):
    norm = jnp.sqrt(_sq(grads))
    scale = jnp.where(norm < max_norm, 1.0, max_norm / jnp.maximum(norm, 1e-30))
    return {"grads": _clip(grads, scale), "global_norm": norm}
