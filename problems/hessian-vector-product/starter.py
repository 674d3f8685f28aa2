import jax
import jax.numpy as jnp


def hvp(w, x, y, v):
    """Gradient and Hessian-vector product of the mean logistic loss,
    forward-over-reverse.

    w, v: (D,); x: (N, D); y: (N,) of 0.0/1.0.
    Returns {"grad": f32[D], "hvp": f32[D]}.
    """
    # TODO: write the loss of w, take jax.grad of it, and push v through
    # that
    # gradient function with jax.jvp.
    raise NotImplementedError
