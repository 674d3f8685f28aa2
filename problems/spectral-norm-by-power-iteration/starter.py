import jax
import jax.numpy as jnp


def spectral_norm(w, u, ct, n_iters):
    """Spectral normalisation of w by n_iters steps of power iteration,
    and its backward pass.

    w: (m, n) float32; u: (n,) float32, the starting vector; ct: (m, n)
    float32, the gradient of the loss
    with respect to w / sigma; n_iters: a Python int.
    Returns {"w_sn": (m, n), "sigma": (), "u": (n,), "grad": (m, n)}.
    """
    # TODO: run the iterations in one jax.lax.fori_loop, hold u and v
    # constant with
    # jax.lax.stop_gradient, and differentiate w / sigma with jax.vjp.
    raise NotImplementedError
