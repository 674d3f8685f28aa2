"""The key's data goes to the host through `jax.pure_callback`, where JAX's own sampler draws the uniforms
and NumPy counts the leading accepts: right numbers, and nothing of it in the traced program.

expect: requirements_not_met
fails: uniforms-from-key, first-rejection-array-ops
"""
import jax
import jax.numpy as jnp
import numpy as np


def _count(key_data, ratio):
    u = np.asarray(jax.random.uniform(jax.random.wrap_key_data(key_data), (ratio.shape[0],)))
    a = 0
    for ok in u < ratio:
        if not ok:
            break
        a += 1
    return np.int32(a)


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    a = jax.pure_callback(_count, jax.ShapeDtypeStruct((), jnp.int32), jax.random.key_data(key), ratio)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
