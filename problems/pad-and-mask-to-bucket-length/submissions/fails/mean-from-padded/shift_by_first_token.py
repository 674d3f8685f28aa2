"""Right numbers, masked, but not only from the padded batch: the mean is taken of the values shifted by the
first sequence's first token (a "stable mean"), and that token is read from the sequence itself, around the
batch.

expect: requirements_not_met
fails: mean-from-padded
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]
    shift = seqs[0][0]
    mean = shift + jnp.sum(jnp.where(mask, padded - shift, 0.0)) / jnp.sum(mask)
    return {"padded": padded, "mask": mask.astype(jnp.float32), "mean": mean}
