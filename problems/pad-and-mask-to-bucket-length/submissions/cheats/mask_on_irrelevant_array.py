"""Cheat: the mask selects from an array of ones (counting tokens), never from the padded batch; the sum
comes from the concatenated sequences.

expect: requirements_not_met
fails: mean-from-padded, mask-over-batch
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    T = min(b for b in buckets if b >= max(s.shape[0] for s in seqs))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = jnp.arange(T)[None, :] < jnp.array([s.shape[0] for s in seqs])[:, None]
    count = jnp.sum(jnp.where(mask, jnp.ones((len(seqs), T)), 0.0))
    return {"padded": padded, "mask": mask.astype(jnp.float32), "mean": jnp.sum(jnp.concatenate(seqs)) / count}
