"""Accepted: the entry function jitted with `buckets` static (`static_argnames`), the way it would be called
in a data pipeline; `lax.select` on the mask.

expect: accepted
fails: none
"""
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="buckets")
def pad_and_mask(seqs, pad_value, buckets):
    T = min(b for b in buckets if b >= max(s.shape[0] for s in seqs))
    rows, masks = [], []
    for s in seqs:
        extra = T - s.shape[0]
        rows.append(jnp.concatenate([s, jnp.full((extra,), pad_value, jnp.float32)]))
        masks.append(jnp.concatenate([jnp.ones_like(s), jnp.zeros((extra,), jnp.float32)]))
    padded, mask = jnp.stack(rows), jnp.stack(masks)
    kept = jax.lax.select(mask > 0, padded, jnp.zeros_like(padded))
    return {"padded": padded, "mask": mask, "mean": kept.sum() / mask.sum()}
