"""Re-sorts the K values top_k already returns best first, with `jnp.sort`/`jnp.argsort`.

expect: requirements_not_met
fails: one-top-k
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    vals, idx = jax.lax.top_k(flat, k)
    order = jnp.argsort(-vals, stable=True)
    vals, idx = vals[order], idx[order]
    parents, tokens = idx // v, idx % v
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
