"""Wrong answer: the mask is `padded != pad_value`, so a real value equal to the pad value is dropped with the
padding.

expect: wrong_answer
fails: mean-from-padded, mask-over-batch
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - n), constant_values=pad_value) for s, n in zip(seqs, lengths)])
    mask = padded != pad_value
    mean = jnp.sum(jnp.where(mask, padded, 0.0)) / jnp.sum(mask)
    return {"padded": padded, "mask": mask.astype(jnp.float32), "mean": mean}
