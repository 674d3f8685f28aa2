"""Right numbers and stable, but the scan carries a running log-sum-exp instead of the maximum and the sum
apart (`jnp.logaddexp`), with the output kept normalised.

expect: requirements_not_met
fails: running-max-in-carry
"""
import jax
import jax.numpy as jnp


def blockwise_attention(q, k, v, block_size):
    T, d = q.shape
    S, e = v.shape
    n = S // block_size

    def step(carry, kv):
        lse, o = carry
        k_j, v_j = kv
        s = q @ k_j.T / jnp.sqrt(jnp.float32(d))
        lse_new = jnp.logaddexp(lse, jax.nn.logsumexp(s, axis=-1))
        o = jnp.exp(lse - lse_new)[:, None] * o + jnp.exp(s - lse_new[:, None]) @ v_j
        return (lse_new, o), None

    init = (jnp.full((T,), -jnp.inf), jnp.zeros((T, e)))
    (lse, o), _ = jax.lax.scan(step, init, (k.reshape(n, block_size, d), v.reshape(n, block_size, e)))
    return o
