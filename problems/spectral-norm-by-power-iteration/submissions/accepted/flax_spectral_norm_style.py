"""Written the way flax's `nn.SpectralNorm` computes it (flax is not installed here): the vectors are kept
as (1, n) and (1, m) rows, `_l2_normalize` multiplies by `lax.rsqrt` of the sum of squares plus
`eps = 1e-12`, the iterations run in a `fori_loop`, `u0` and `v0` go through `lax.stop_gradient`, sigma is
`v0 @ W @ u0.T` taken at `[0, 0]`, and the gradient comes from `jax.grad` of the contraction with `ct`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax import lax


def _l2_normalize(x, axis=None, eps=1e-12):
    return x * lax.rsqrt((x * x).sum(axis=axis, keepdims=True) + eps)


def _spectral_normalize(value, u0, n_steps, eps=1e-12):
    value_bar = value  # already (in_features, out_features) in flax's terms: here (m, n)

    def power_step(_, uv):
        u0, _ = uv
        v0 = _l2_normalize(jnp.matmul(u0, value_bar.transpose([1, 0])), eps=eps)
        u0 = _l2_normalize(jnp.matmul(v0, value_bar), eps=eps)
        return u0, v0

    v_init = jnp.zeros((1, value.shape[0]), value.dtype)
    u0, v0 = lax.fori_loop(0, n_steps, power_step, (u0[None, :], v_init))
    u0 = lax.stop_gradient(u0)
    v0 = lax.stop_gradient(v0)
    sigma = jnp.matmul(jnp.matmul(v0, value_bar), jnp.transpose(u0))[0, 0]
    value = value / jnp.where(sigma != 0, sigma, 1)
    return value, sigma, u0[0]


def spectral_norm(w, u, ct, n_iters):
    w_sn, sigma, u_new = _spectral_normalize(w, u, n_iters)
    grad = jax.grad(lambda w: jnp.sum(ct * _spectral_normalize(w, u, n_iters)[0]))(w)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_new, "grad": grad}
