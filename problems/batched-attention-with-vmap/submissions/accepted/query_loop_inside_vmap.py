"""Query loop inside vmap.

expect: accepted
fails: none
"""
# One example's attention walks its query positions with a Python loop (T copies of a row softmax), and
# jax.vmap maps it over the examples: the loop is over queries, not examples, so the batch is still
# processed at once.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    scale = 1.0 / jnp.sqrt(jnp.float32(q.shape[-1]))
    rows = []
    for t in range(q.shape[0]):
        s = (k @ q[t]) * scale
        p = jnp.exp(s - jnp.max(s))
        rows.append((p / p.sum()) @ v)
    return jnp.stack(rows)


def attention(q, k, v):
    return jax.vmap(attend)(q, k, v)
