import jax
import jax.numpy as jnp


def ste_value_and_grad(w, x, y, levels):
    """Loss with rounded weights, and its straight-through gradient via
    jax.custom_vjp.

    w: (D, K); x: (B, D); y: (B, K); levels: Python int.
    Returns {"loss": f32[], "grad": f32[D, K]}.
    """
    # TODO: define quantize(w) with @jax.custom_vjp (round in the
    # forward pass, a clipped identity
    # in the backward pass), then jax.value_and_grad a loss that uses
    # it.
    raise NotImplementedError
