import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    positions = jnp.arange(n)
    p = target_probs[positions, draft_tokens]          # p_i(x_i)
    q = draft_probs[positions, draft_tokens]           # q_i(x_i)
    u = jax.random.uniform(key, (n,))
    accepted = u < jnp.minimum(1.0, p / q)             # every position at once
    num_accepted = jnp.sum(jnp.cumprod(accepted.astype(jnp.int32)))   # the leading run of accepts
    residual = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = jnp.sum(residual, axis=1, keepdims=True)
    # no token with p > q (only through rounding): the residual is undefined, and p itself is used
    residual = jnp.where(total > 0, residual / jnp.where(total > 0, total, 1.0), target_probs[:n])
    rows = jnp.concatenate([residual, target_probs[n:]], axis=0)      # row n: the bonus distribution
    return {"num_accepted": num_accepted.astype(jnp.int32), "next_probs": rows[num_accepted]}
