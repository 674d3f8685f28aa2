import jax
import jax.numpy as jnp


def ema(x, init, decay):
    """Exponential moving average of the rows of x, walked with one
    lax.scan.

    x: (T, D); init: (D,); decay: f32[] with 0 <= decay < 1.
    Returns {"averages": f32[T, D], "final": f32[D]}.
    """
    # TODO: write step(carry, row) -> (new_average, new_average) and
    # scan it over x.
    raise NotImplementedError
