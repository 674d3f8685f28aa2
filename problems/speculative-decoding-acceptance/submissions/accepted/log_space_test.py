"""The test in log space, `log u < log p - log q` (log q = -inf gives +inf, an acceptance), and the leading
run counted by `jnp.cumsum` of the rejections staying at zero.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    pos = jnp.arange(n)
    log_ratio = jnp.log(target_probs[pos, draft_tokens]) - jnp.log(draft_probs[pos, draft_tokens])
    log_u = jnp.log(jax.random.uniform(key, (n,)))
    accepted = log_u < log_ratio
    a = jnp.sum(jnp.cumsum(~accepted) == 0).astype(jnp.int32)
    diff = jnp.maximum(target_probs[:n] - draft_probs, 0.0)
    total = diff.sum(1, keepdims=True)
    rows = jnp.concatenate([jnp.where(total == 0, target_probs[:n], diff / jnp.maximum(total, 1e-30)),
                            target_probs[n:]], 0)
    return {"num_accepted": a, "next_probs": jnp.take(rows, a, axis=0)}
