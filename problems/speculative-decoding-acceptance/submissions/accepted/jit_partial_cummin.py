"""`functools.partial(jax.jit)` around a helper, the leading run as `jnp.sum` of a running minimum
(`lax.cummin` of the 0/1 flags), the ratio with `jnp.where` guarding q = 0 as an acceptance.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax


@functools.partial(jax.jit, static_argnames=("n",))
def _accept_count(u, p, q, n):
    ratio = jnp.where(q > 0, p / jnp.where(q > 0, q, 1.0), jnp.inf)
    flags = (u < jnp.minimum(ratio, 1.0)).astype(jnp.int32)
    return jnp.sum(lax.cummin(flags, axis=0)).astype(jnp.int32)


def speculative_accept(draft_tokens, draft_probs, target_probs, key):
    n = draft_tokens.shape[0]
    gather = jax.vmap(lambda row, x: row[x])
    a = _accept_count(jax.random.uniform(key, (n,)), gather(target_probs[:n], draft_tokens),
                      gather(draft_probs, draft_tokens), n=n)
    residual = jax.nn.relu(target_probs[:n] - draft_probs)
    residual = residual / residual.sum(-1, keepdims=True)
    residual = jnp.where(jnp.isnan(residual), target_probs[:n], residual)  # 0 / 0: no token with p > q
    next_probs = jnp.where(a < n, residual[jnp.minimum(a, n - 1)], target_probs[n])
    return {"num_accepted": a, "next_probs": next_probs}
