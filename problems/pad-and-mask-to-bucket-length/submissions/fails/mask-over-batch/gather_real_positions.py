"""Right numbers from the padded batch, without a mask: the real positions are gathered from the flattened
batch by their (static) indices.

expect: requirements_not_met
fails: mask-over-batch
"""
import numpy as np
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (np.arange(T)[None, :] < np.array(lengths)[:, None]).astype(np.float32)
    real = np.flatnonzero(mask.reshape(-1))
    return {"padded": padded, "mask": jnp.asarray(mask), "mean": jnp.mean(jnp.take(padded.reshape(-1), real))}
