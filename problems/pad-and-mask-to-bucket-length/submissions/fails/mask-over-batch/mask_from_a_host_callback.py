"""The mask is made in NumPy and handed back by `jax.pure_callback` (given the batch only so that it has an
operand): right numbers, but the traced program does not build the mask, and the grader cannot see what the
host read to make it.

expect: requirements_not_met
fails: mask-over-batch
"""
import jax
import jax.numpy as jnp
import numpy as np


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    rows = [jnp.concatenate([s, jnp.full((T - s.shape[0],), pad_value, s.dtype)]) for s in seqs]
    padded = jnp.stack(rows)
    mask = jax.pure_callback(lambda p: (np.arange(T)[None, :] < np.array(lengths)[:, None]).astype(np.float32),
                             jax.ShapeDtypeStruct(padded.shape, jnp.float32), padded)
    mean = jnp.sum(jnp.where(mask > 0, padded, 0.0)) / jnp.sum(mask)
    return {"padded": padded, "mask": mask, "mean": mean}
