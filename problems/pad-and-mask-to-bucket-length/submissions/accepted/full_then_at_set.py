"""Accepted: a batch full of the pad value with each sequence written into its row by `.at[].set()`, and
`jnp.mean(..., where=...)`.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    longest = max(s.shape[0] for s in seqs)
    T = min(b for b in buckets if b >= longest)
    padded = jnp.full((len(seqs), T), pad_value, dtype=jnp.float32)
    mask = jnp.zeros((len(seqs), T), jnp.float32)
    for i, s in enumerate(seqs):
        padded = padded.at[i, : s.shape[0]].set(s)
        mask = mask.at[i, : s.shape[0]].set(1.0)
    return {"padded": padded, "mask": mask, "mean": jnp.mean(padded, where=mask > 0)}
