"""Cheat: the masked mean of the padded batch is computed but multiplied by zero; the answer is the mean of
the concatenated sequences.

expect: requirements_not_met
fails: mean-from-padded
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    T = min(b for b in buckets if b >= max(s.shape[0] for s in seqs))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array([s.shape[0] for s in seqs])[:, None]).astype(jnp.float32)
    masked = jnp.sum(padded * mask) / jnp.sum(mask)
    return {"padded": padded, "mask": mask, "mean": 0.0 * masked + jnp.mean(jnp.concatenate(seqs))}
