"""jax.nn.dot_product_attention.

expect: accepted
fails: none
"""
# The library routine jax.nn.dot_product_attention on (B, T, N, H) arrays with one head: it vmaps over the
# batch and heads and subtracts each row's maximum itself. It wants equal head sizes, so when e != d the
# queries, keys and values are zero-padded to the larger size (zeros add nothing to q . k) and the extra
# output columns are cut off.
import jax
import jax.numpy as jnp


def attention(q, k, v):
    e, d = v.shape[-1], q.shape[-1]
    if e != d:
        pad = max(d, e)
        q = jnp.pad(q, ((0, 0), (0, 0), (0, pad - d)))
        k = jnp.pad(k, ((0, 0), (0, 0), (0, pad - d)))
        v = jnp.pad(v, ((0, 0), (0, 0), (0, pad - e)))
    out = jax.nn.dot_product_attention(q[:, :, None, :], k[:, :, None, :], v[:, :, None, :], scale=d ** -0.5)
    return out[:, :, 0, :e]
