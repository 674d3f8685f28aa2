import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    num_beams, vocab = log_probs.shape
    # A finished beam may only be extended by eos_id, at no cost; every other token is ruled out.
    only_eos = jnp.where(jnp.arange(vocab) == eos_id, 0.0, -jnp.inf)
    step = jnp.where(finished[:, None], only_eos[None, :], log_probs)
    candidates = scores[:, None] + step                      # (K, V)
    top_scores, flat = jax.lax.top_k(candidates.reshape(-1), num_beams)
    parents = flat // vocab
    tokens = flat % vocab
    return {
        "scores": top_scores,
        "parents": parents,
        "tokens": tokens,
        "finished": finished[parents] | (tokens == eos_id),
    }
