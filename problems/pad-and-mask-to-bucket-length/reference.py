import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    # Chosen in Python, from the static lengths: T is part of the traced program's shapes.
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))

    rows = [jnp.concatenate([s, jnp.full((T - s.shape[0],), pad_value, s.dtype)]) for s in seqs]
    padded = jnp.stack(rows)                                                   # (B, T)
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)  # (B, T)

    mean = jnp.sum(jnp.where(mask > 0, padded, 0.0)) / jnp.sum(mask)
    return {"padded": padded, "mask": mask, "mean": mean}
