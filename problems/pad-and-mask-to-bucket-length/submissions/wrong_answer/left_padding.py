"""Wrong answer: the padding put before each sequence instead of after it (the mask follows, so the mean is
right, but `padded` and `mask` are not).

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (T - n, 0), constant_values=pad_value) for s, n in zip(seqs, lengths)])
    mask = (jnp.arange(T)[None, :] >= T - jnp.array(lengths)[:, None]).astype(jnp.float32)
    return {"padded": padded, "mask": mask, "mean": jnp.sum(padded * mask) / jnp.sum(mask)}
