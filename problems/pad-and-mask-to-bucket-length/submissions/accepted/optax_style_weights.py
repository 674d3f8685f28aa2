"""Accepted, in the style of optax's weighted losses: the mask is a per-token weight, and the mean is
`jnp.average` with those weights.

expect: accepted
fails: none
"""
import bisect

import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = buckets[bisect.bisect_left(buckets, max(lengths))]
    weights = jnp.stack([jnp.pad(jnp.ones_like(s), (0, T - s.shape[0])) for s in seqs])
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    return {"padded": padded, "mask": weights, "mean": jnp.average(padded, weights=weights)}
