"""K rounds of argmax (take the best, knock it out with -inf, repeat: no sort), and a top_k whose values are
added times zero so that it looks used.

expect: requirements_not_met
fails: one-top-k, flat-index-split
"""
import jax
import jax.numpy as jnp


def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    only_eos = jnp.where(jnp.arange(v) == eos_id, 0.0, -jnp.inf)
    flat = (scores[:, None] + jnp.where(finished[:, None], only_eos, log_probs)).reshape(-1)
    decoy, _ = jax.lax.top_k(flat, k)
    picks, vals, taken = [], [], jnp.zeros(flat.shape, bool)
    for _ in range(k):
        i = jnp.argmax(jnp.where(taken, -jnp.inf, flat))
        i = jnp.where(taken[i], jnp.argmin(taken), i)  # only -inf left: the first one not taken yet
        picks.append(i)
        vals.append(flat[i])
        taken = taken.at[i].set(True)
    idx = jnp.stack(picks).astype(jnp.int32)
    parents, tokens = idx // v, idx % v
    return {"scores": jnp.stack(vals) + 0.0 * jnp.nan_to_num(decoy), "parents": parents, "tokens": tokens,
            "finished": finished[parents] | (tokens == eos_id)}
