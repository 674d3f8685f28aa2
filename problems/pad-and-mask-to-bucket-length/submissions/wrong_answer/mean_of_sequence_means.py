"""Wrong answer: each sequence's own masked mean, then the mean of those, so a short sequence weighs as much
as a long one.

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - n), constant_values=pad_value) for s, n in zip(seqs, lengths)])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    per_sequence = jnp.sum(padded * mask, axis=1) / jnp.sum(mask, axis=1)
    return {"padded": padded, "mask": mask, "mean": jnp.mean(per_sequence)}
