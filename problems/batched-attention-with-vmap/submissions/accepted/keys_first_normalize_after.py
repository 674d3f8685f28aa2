"""Keys first normalize after.

expect: accepted
fails: none
"""
# maxtext-style: scores laid out keys-first, (S, T), so the softmax runs over axis 0; the row maxima are
# taken along that key axis, the unnormalised weights are applied to the values first and the sums divided
# out afterwards.
import jax
import jax.numpy as jnp


def attend(q, k, v):
    scores = jnp.einsum("sd,td->st", k, q) * jax.lax.rsqrt(jnp.float32(q.shape[-1]))
    m = jnp.max(scores, axis=0, keepdims=True)
    p = jnp.exp(scores - m)
    out = jnp.einsum("st,se->te", p, v)
    return out / jnp.sum(p, axis=0)[:, None]


def attention(q, k, v):
    return jax.vmap(attend, in_axes=(0, 0, 0), out_axes=0)(q, k, v)
