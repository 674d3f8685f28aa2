"""Flattens the (V, K) transpose and splits with `% K` and `// K` to match: every real pick is right, but
equal (-inf) candidates come out in another order than the statement's flat index k*V + v gives.

expect: wrong_answer
fails: flat-index-split
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    cand = scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)
    vals, idx = jax.lax.top_k(cand.T.reshape(-1), k)
    parents, tokens = idx % k, idx // k
    return {"scores": vals, "parents": parents, "tokens": tokens, "finished": finished[parents] | (tokens == eos_id)}
