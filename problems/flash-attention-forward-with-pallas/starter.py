import math

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def flash_kernel(q_ref, k_ref, v_ref, o_ref, m_ref, l_ref, acc_ref):
    # q_ref: (bq, D) block of q; k_ref, v_ref: (bk, D) blocks of k, v;
    # o_ref: (bq, D) block of the output; m_ref, l_ref: (bq, 1) and
    # acc_ref: (bq, D) float32 scratch in VMEM that lives across the
    # key/value axis's steps (program_id(1)).
    raise NotImplementedError


def flash_attention(q, k, v, bq, bk):
    """q: (Lq, D), k and v: (Lk, D), float32 -> (Lq, D) float32.

    One pallas_call over the grid (Lq // bq, Lk // bk), the key/value
    axis last: blocks (bq, D) of q and of the output at (i, 0), (bk, D)
    of k and v at (j, 0).
    """
    raise NotImplementedError
