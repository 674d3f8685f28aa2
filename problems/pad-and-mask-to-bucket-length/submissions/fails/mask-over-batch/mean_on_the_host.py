"""The padded batch and the mask are built and applied in JAX, but the mean itself is computed in NumPy
through `jax.pure_callback`: right numbers, computed outside the traced program.

expect: requirements_not_met
fails: mask-over-batch
"""
import jax
import jax.numpy as jnp
import numpy as np


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.concatenate([s, jnp.full((T - s.shape[0],), pad_value, s.dtype)]) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    masked = jnp.where(mask > 0, padded, 0.0)
    mean = jax.pure_callback(lambda a, m: np.float32(a.sum() / m.sum()), jax.ShapeDtypeStruct((), jnp.float32), masked, mask)
    return {"padded": padded, "mask": mask, "mean": mean}
