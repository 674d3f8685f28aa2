"""Accepted: the mask built with NumPy (a constant of the traced program, since the lengths are static) and
multiplied into the batch.

expect: accepted
fails: none
"""
import numpy as np
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = np.array([s.shape[0] for s in seqs])
    T = int(min(b for b in buckets if b >= lengths.max()))
    mask = (np.arange(T)[None, :] < lengths[:, None]).astype(np.float32)
    padded = jnp.stack([jnp.concatenate([s, jnp.broadcast_to(jnp.float32(pad_value), (T - len(s),))])
                        for s in seqs])
    mean = jnp.sum(padded * mask) / mask.sum()
    return {"padded": padded, "mask": jnp.asarray(mask), "mean": mean}
