import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def ragged_kernel(lens_ref, x_ref, o_ref, acc_ref):
    # lens_ref: the prefetched lengths, (M // bm,) int32 in SMEM;
    # x_ref: the (bm, bn) block of x; o_ref: the (bm, 1) block of
    # the output; acc_ref: (bm, bn) float32 scratch in VMEM.
    raise NotImplementedError


def ragged_sum(x, lengths, bm, bn):
    """x: (M, N) float32, lengths: (M // bm,) int32 -> (M, 1) float32.

    out[r] = sum of x[r, :lengths[r // bm]]. One pallas_call over
    the grid (M // bm, N // bn), with lengths scalar-prefetched.
    """
    raise NotImplementedError
