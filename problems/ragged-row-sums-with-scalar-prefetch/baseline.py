"""The `jnp` version: every entry masked by its row block's length and summed, fused as XLA sees fit (the Cost
tab's comparison; what the masked `jnp.sum` timed on the chip is)."""
import jax.numpy as jnp


def ragged_sum(x, lengths, bm, bn):
    m, n = x.shape
    row_lengths = jnp.repeat(lengths, bm)[:, None]
    cols = jnp.arange(n)[None, :]
    return jnp.sum(jnp.where(cols < row_lengths, x, 0.0), axis=1, keepdims=True)
