"""A top_k per beam (under vmap), then a second top_k over the K*K survivors: right numbers, but two
searches, and the flat index of the second is not k*V + v.

expect: requirements_not_met
fails: one-top-k, flat-index-split
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    cand = scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)
    row_vals, row_tokens = jax.vmap(lambda r: jax.lax.top_k(r, min(k, v)))(cand)     # (K, min(K, V))
    vals, pos = jax.lax.top_k(row_vals.reshape(-1), k)
    width = row_vals.shape[1]
    parents = pos // width
    tokens = row_tokens.reshape(-1)[pos]
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
