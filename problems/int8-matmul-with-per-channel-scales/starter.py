import jax
import jax.numpy as jnp


def int8_matmul(x, w_q, w_scale):
    """x: float32 (M, K) activations; w_q: int8 (K, N) weights; w_scale:
    float32 (N,) scales of w_q's columns.

    Quantize each row of x to int8 (symmetric, scale = the row's largest
    magnitude / 127), multiply the int8
    matrices with int32 accumulation, then scale the result back to
    float32. Returns a float32 (M, N) array.
    """
    raise NotImplementedError
