"""Wrong answer: the padding summed in and its total subtracted afterwards. Exact on paper; in float32 a huge
pad value has swamped the sum, and the real values' digits are gone.

expect: wrong_answer
fails: mean-from-padded, mask-over-batch
"""
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    lengths = [s.shape[0] for s in seqs]
    T = min(b for b in buckets if b >= max(lengths))
    padded = jnp.stack([jnp.pad(s, (0, T - n), constant_values=pad_value) for s, n in zip(seqs, lengths)])
    mask = (jnp.arange(T)[None, :] < jnp.array(lengths)[:, None]).astype(jnp.float32)
    padding = len(seqs) * T - sum(lengths)
    return {"padded": padded, "mask": mask, "mean": (jnp.sum(padded) - pad_value * padding) / sum(lengths)}
