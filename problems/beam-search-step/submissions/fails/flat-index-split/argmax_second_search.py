"""Finds each pick's beam by searching again: the row of the (K, V) candidates where top_k's value occurs
(an argmax over a comparison), instead of `i // V`.

expect: requirements_not_met
fails: flat-index-split
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    cand = scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)
    vals, idx = jax.lax.top_k(cand.reshape(-1), k)
    tokens = idx % v
    hits = cand[:, tokens].T == vals[:, None]          # (K picks, K beams): where each value sits
    first_hit = jnp.argmax(hits, axis=1).astype(jnp.int32)
    parents = jnp.where(jnp.isneginf(vals), idx // v, first_hit)
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
