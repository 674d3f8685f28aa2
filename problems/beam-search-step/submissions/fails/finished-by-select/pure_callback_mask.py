"""The finished rows masked in NumPy on the host through `jax.pure_callback`.

expect: requirements_not_met
fails: finished-by-select
"""
import jax
import jax.numpy as jnp
import numpy as np


def _mask(log_probs, finished, eos_id):
    out = np.array(log_probs, copy=True)
    row = np.full(out.shape[1], -np.inf, out.dtype)
    row[int(eos_id)] = 0.0
    out[np.asarray(finished)] = row
    return out


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    masked = jax.pure_callback(_mask, jax.ShapeDtypeStruct(log_probs.shape, log_probs.dtype),
                               log_probs, finished, eos_id)
    vals, idx = jax.lax.top_k((scores[:, None] + masked).reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
