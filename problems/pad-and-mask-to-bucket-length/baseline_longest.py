"""Padding to the longest sequence of each batch: the least padding, and a new program for every new length."""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = max(lengths)
    padded = jnp.stack([jnp.pad(s, (0, T - n), constant_values=pad_value) for s, n in zip(seqs, lengths)])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    return {"padded": padded, "mask": mask, "mean": jnp.sum(jnp.where(mask > 0, padded, 0.0)) / jnp.sum(mask)}
