"""The flags are computed in the program, but NumPy counts the leading run on the host through
`jax.pure_callback`.

expect: requirements_not_met
fails: first-rejection-array-ops
"""
import numpy as np
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    ratio = jnp.minimum(1.0, target_probs[pos, draft_tokens] / draft_probs[pos, draft_tokens])
    accepted = jax.random.uniform(key, (n,)) < ratio
    count = lambda ok: np.int32(np.argmin(np.append(np.asarray(ok), False)))
    a = jax.pure_callback(count, jax.ShapeDtypeStruct((), jnp.int32), accepted)
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = residual.sum(1, keepdims=True)  # 0 only through rounding: then p itself
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]])
    return {"num_accepted": a, "next_probs": rows[a]}
