"""The masked total as one contraction, `jnp.einsum("bt,bt->", padded, mask)`: a product of the batch with the
mask summed in the same operation counts as a product with the mask, as the requirement says.

expect: accepted
fails: none
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    return {"padded": padded, "mask": mask, "mean": jnp.einsum("bt,bt->", padded, mask) / mask.sum()}
