"""Accepted, maxtext-style: each block's attention is computed on its own (its local maximum, local sum and
unnormalised local output, as maxtext's attention op returns them) and merged into the running statistics
with `exp(local_max - new_max)` and `exp(old_max - new_max)`, the way ring attention and
`normalize_attention` combine partial softmaxes.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def _local_attention(q_scaled, k_blk, v_blk):
    logits = jnp.einsum("td,kd->tk", q_scaled, k_blk)
    local_max = jnp.max(logits, axis=-1, keepdims=True)
    local_exps = jnp.exp(logits - local_max)
    local_sum = jnp.sum(local_exps, axis=-1, keepdims=True)
    local_out = jnp.einsum("tk,ke->te", local_exps, v_blk)
    return local_out, local_max, local_sum


def blockwise_attention(q, k, v, block_size):
    num_blocks = k.shape[0] // block_size
    q_scaled = q * (q.shape[-1] ** -0.5)

    def body(carry, kv):
        out, row_max, row_sum = carry
        local_out, local_max, local_sum = _local_attention(q_scaled, *kv)
        new_max = jnp.maximum(row_max, local_max)
        old_scale = jnp.exp(row_max - new_max)
        local_scale = jnp.exp(local_max - new_max)
        return (out * old_scale + local_out * local_scale, new_max,
                row_sum * old_scale + local_sum * local_scale), None

    init = (jnp.zeros((q.shape[0], v.shape[-1])), jnp.full((q.shape[0], 1), -jnp.inf), jnp.zeros((q.shape[0], 1)))
    xs = (k.reshape(num_blocks, block_size, -1), v.reshape(num_blocks, block_size, -1))
    (out, _, row_sum), _ = jax.lax.scan(body, init, xs)
    return out / row_sum
