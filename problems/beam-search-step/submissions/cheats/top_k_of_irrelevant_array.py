"""A top_k of an array that has nothing to do with the candidates (a ramp), added times zero; the beams come
from rounds of argmax.

expect: requirements_not_met
fails: one-top-k, flat-index-split
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    ramp_vals, ramp_idx = jax.lax.top_k(jnp.arange(k * v, dtype=jnp.float32), k)
    picks, vals, taken = [], [], jnp.zeros(flat.shape, bool)
    for _ in range(k):
        i = jnp.argmax(jnp.where(taken, -jnp.inf, flat))
        i = jnp.where(taken[i], jnp.argmin(taken), i)  # only -inf left: the first one not taken yet
        picks.append(i)
        vals.append(flat[i])
        taken = taken.at[i].set(True)
    idx = jnp.stack(picks).astype(jnp.int32) + 0 * ramp_idx
    parents, tokens = idx // v, idx % v
    return {"scores": flat[idx] + 0.0 * ramp_vals, "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
