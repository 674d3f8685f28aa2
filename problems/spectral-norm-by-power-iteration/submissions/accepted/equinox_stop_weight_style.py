"""Written the way equinox's `eqx.nn.SpectralNorm` holds the estimate constant (equinox is not installed
here): the power iteration runs on `lax.stop_gradient(weight)`, so its vectors carry no gradient, and sigma
is `jnp.einsum("i,ij,j->", v, weight, u)` on the live weight; the loop is a `fori_loop` (equinox unrolls
a Python loop: the `fori_loop` is this problem's requirement), and the gradient comes from `jax.vjp`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _normalise(x, eps=1e-12):
    return x / jnp.sqrt(jnp.sum(x ** 2) + eps)


def _power_iteration(weight, u, v):
    v = _normalise(weight @ u)
    u = _normalise(weight.T @ v)
    return u, v


def spectral_norm(w, u, ct, n_iters):
    def apply(weight):
        stop_weight = lax.stop_gradient(weight)
        u_, v_ = lax.fori_loop(0, n_iters, lambda _, uv: _power_iteration(stop_weight, *uv),
                               (u, jnp.zeros(weight.shape[0])))
        sigma = jnp.einsum("i,ij,j->", v_, weight, u_)
        return weight / sigma, (sigma, u_)

    w_sn, pullback, (sigma, u_new) = jax.vjp(apply, w, has_aux=True)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_new, "grad": pullback(ct)[0]}
