"""Accepted: `jnp.pad` with `constant_values`, a boolean mask from the lengths, `jnp.where` for the mean.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [int(s.shape[0]) for s in seqs]
    T = next(b for b in sorted(buckets) if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    valid = jnp.arange(T)[None, :] < jnp.asarray(lengths)[:, None]
    mean = jnp.sum(jnp.where(valid, padded, 0.0)) / jnp.sum(valid)
    return {"padded": padded, "mask": valid.astype(jnp.float32), "mean": mean}
