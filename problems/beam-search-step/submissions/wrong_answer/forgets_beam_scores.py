"""Ranks the next tokens by their own log-probabilities only, forgetting each beam's cumulative score (which
it adds back afterwards, so the scores it returns are not the ones top_k picked).

expect: wrong_answer
fails: one-top-k
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    step = jnp.where(finished[:, None], only_eos, log_probs)
    _, idx = jax.lax.top_k(step.reshape(-1), k)
    parents, tokens = idx // v, idx % v
    return {"scores": scores[parents] + step.reshape(-1)[idx], "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
