import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def matmul_kernel(a_ref, b_ref, o_ref, acc_ref):
    # a_ref: (bm, bk) block of a; b_ref: (bk, bn) block of b;
    # o_ref: (bm, bn) block of the output; acc_ref: (bm, bn) float32
    # scratch in VMEM that lives across the contraction axis's steps.
    raise NotImplementedError


def blocked_matmul(a, b, bm, bn, bk):
    """a: (M, K) bfloat16, b: (K, N) bfloat16 -> (M, N) float32.

    One pallas_call over the grid (M // bm, N // bn, K // bk):
    blocks (bm, bk) of a, (bk, bn) of b, (bm, bn) of the output.
    """
    raise NotImplementedError
