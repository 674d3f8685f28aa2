"""Wrong answer: each block's exponentials are taken under that block's own maximum and summed as they are,
with no running maximum to bring them onto one scale.

expect: wrong_answer
fails: running-max-in-carry
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, kv):
        m, l, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        p = jnp.exp(s - s.max(-1, keepdims=True))
        return (m, l + p.sum(-1), o + p @ v_j), None

    (m, l, o), _ = jax.lax.scan(step, (jnp.full((T,), -jnp.inf), jnp.zeros((T,)), jnp.zeros((T, e))), (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o / l[:, None]
