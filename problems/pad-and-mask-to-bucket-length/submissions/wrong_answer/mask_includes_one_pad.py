"""The comparison flipped from `<` to `<=`: the mask keeps one padding position past each sequence (where
the bucket has room), so `mask` and `mean` are wrong. The structure is right: a (B, T) mask built from the
lengths selects over the whole padded batch, and both rows hold.

expect: wrong_answer
fails: none
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.concatenate([s, jnp.full((T - s.shape[0],), pad_value, s.dtype)]) for s in seqs])
    mask = (jnp.arange(T)[None, :] <= jnp.array(lengths)[:, None]).astype(jnp.float32)
    mean = jnp.sum(jnp.where(mask > 0, padded, 0.0)) / jnp.sum(mask)
    return {"padded": padded, "mask": mask, "mean": mean}
