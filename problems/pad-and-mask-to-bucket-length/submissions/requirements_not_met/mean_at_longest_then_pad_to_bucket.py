"""Right numbers, per-length program: the batch is padded to the longest length first and the masked mean
taken there; only the returned copy is padded on to the bucket.

expect: requirements_not_met
fails: mean-from-padded, mask-over-batch
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    longest = max(lengths)
    T = min(b for b in buckets if b >= longest)
    tight = jnp.stack([jnp.pad(s, (0, longest - n), constant_values=pad_value) for s, n in zip(seqs, lengths)])
    tight_mask = jnp.arange(longest)[None, :] < jnp.array(lengths)[:, None]
    mean = jnp.sum(jnp.where(tight_mask, tight, 0.0)) / jnp.sum(tight_mask)
    padded = jnp.pad(tight, ((0, 0), (0, T - longest)), constant_values=pad_value)
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    return {"padded": padded, "mask": mask, "mean": mean}
