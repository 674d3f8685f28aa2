"""Cheat: a product with the mask sits in the mean but is multiplied by zero; the real positions are cut out
of the padded batch row by row.

expect: requirements_not_met
fails: mask-over-batch
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    real = sum(jnp.sum(padded[i, :n]) for i, n in enumerate(lengths))
    return {"padded": padded, "mask": mask, "mean": real / sum(lengths) + 0.0 * jnp.sum(padded * mask)}
