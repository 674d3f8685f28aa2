import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

EPS = 1e-5


def layer_norm_kernel(x_ref, gamma_ref, beta_ref, o_ref):
    # x_ref: a (bm, N) block of x, bm whole rows;
    # gamma_ref, beta_ref: the scale and shift, the same at
    # every step; o_ref: the block's rows of the output.
    raise NotImplementedError


def layer_norm(x, gamma, beta, bm):
    """x: (M, N) float32; gamma, beta: (N,) -> (M, N) float32.

    One pallas_call over the grid (M // bm,): a (bm, N) block
    of x in, the same block of the output out.
    """
    raise NotImplementedError
