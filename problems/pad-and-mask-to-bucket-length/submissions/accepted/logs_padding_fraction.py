"""A collator that reports how much of the bucket is padding with `jax.debug.print` (as input pipelines log
their waste): the print only reads the mask, which is built from the lengths in the traced program and
applied with `jnp.where`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = jnp.array([s.shape[0] for s in seqs])
    bucket = min(b for b in buckets if b >= max(s.shape[0] for s in seqs))
    padded = jnp.stack([jnp.pad(s, (0, bucket - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = jnp.arange(bucket)[None, :] < lengths[:, None]
    jax.debug.print("padding: {f:.0%} of the batch", f=1.0 - jnp.mean(mask))
    mean = jnp.where(mask, padded, 0.0).sum() / mask.sum()
    return {"padded": padded, "mask": mask.astype(jnp.float32), "mean": mean}
