"""Accepted, written like a data collator in a Flax training loop: a small class chooses the bucket and
builds the batch; the loss function takes the batch and its mask.

expect: accepted
fails: none
"""
import dataclasses

import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class BucketCollator:
    buckets: tuple

    def length_for(self, longest):
        return min(b for b in self.buckets if b >= longest)

    def __call__(self, seqs, pad_value):
        T = self.length_for(max(s.shape[0] for s in seqs))
        batch = jnp.stack([jnp.pad(s, (0, T - s.shape[0]), constant_values=pad_value) for s in seqs])
        lengths = jnp.array([s.shape[0] for s in seqs])
        mask = jnp.arange(T) < lengths[:, None]
        return batch, mask


def masked_mean(values, mask):
    return jnp.sum(values, where=mask) / jnp.count_nonzero(mask)


def pad_and_mask(seqs, pad_value, buckets):
    batch, mask = BucketCollator(tuple(buckets))(seqs, pad_value)
    return {"padded": batch, "mask": mask.astype(jnp.float32), "mean": masked_mean(batch, mask)}
