import jax
import jax.numpy as jnp


def pad_and_mask(seqs, pad_value, buckets):
    """Pad a list of 1-D sequences into one batch whose length is a
    bucket, with a mask and a masked mean.

    seqs: a list of B float32 arrays of shapes (L_1,), ..., (L_B,);
    pad_value: a float32 scalar;
    buckets: a tuple of increasing Python ints. Returns {"padded": (B,
    T), "mask": (B, T), "mean": ()},
    where T is the smallest bucket that holds the longest sequence.
    """
    # TODO: choose T in Python from the lengths, pad every sequence to T
    # with pad_value, build the mask
    # from the lengths, and average the real positions only.
    raise NotImplementedError
