"""Right numbers from the padded batch, without a mask: each row is cut back to its sequence's length.

expect: requirements_not_met
fails: mask-over-batch
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    total = sum(jnp.sum(padded[i, :n]) for i, n in enumerate(lengths))
    return {"padded": padded, "mask": mask, "mean": total / sum(lengths)}
