"""The branch-free form optax keeps in a comment: divide by `max(norm, max_norm)` and multiply by
`max_norm`; the divisor is never zero.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def clip_by_global_norm(grads, max_norm):
    leaves = jax.tree.leaves(grads)
    norm = jnp.sqrt(sum((x * x).sum() for x in leaves))
    divisor = jnp.maximum(max_norm, norm)
    return {"grads": jax.tree.map(lambda t: (t / divisor) * max_norm, grads), "global_norm": norm}
