"""maxtext-style: the finished mask written with `jnp.full(...).at[eos_id].set(0.0)`, the step under
`jax.jit`, and `jnp.unravel_index` to turn the flat indices back into (beam, token).

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


@jax.jit
def beam_search_step(scores, log_probs, finished, eos_id):
    k, v = log_probs.shape
    eos_row = jnp.full((v,), -jnp.inf, dtype=log_probs.dtype).at[eos_id].set(0.0)
    per_token = jax.lax.select(jnp.broadcast_to(finished[:, None], (k, v)),
                               jnp.broadcast_to(eos_row, (k, v)), log_probs)
    top_scores, flat = jax.lax.top_k((scores[:, None] + per_token).ravel(), k)
    parents, tokens = jnp.unravel_index(flat, (k, v))
    return {"scores": top_scores, "parents": parents.astype(jnp.int32), "tokens": tokens.astype(jnp.int32),
            "finished": finished[parents] | (tokens == eos_id)}
