"""Right numbers, masked, with the concatenated sequences' sum added and subtracted again: a path around the
padded batch that happens to cancel.

expect: requirements_not_met
fails: mean-from-padded
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    flat = jnp.sum(jnp.concatenate(seqs))
    mean = (jnp.sum(padded * mask) + flat - flat) / jnp.sum(mask)
    return {"padded": padded, "mask": mask, "mean": mean}
