"""Written the way haiku's `hk.SpectralNorm` computes it (haiku is not installed here): `_l2_normalize`
divides by the square root of `jnp.maximum(sum of squares, eps)`, the iterations run in a `lax.scan` with
no inputs (`xs=None, length=n_iters`), and both vectors pass through `jax.lax.stop_gradient`; the gradient
is the pullback of `jax.vjp` applied to `ct`.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def _l2_normalize(x, eps=1e-12):
    return x * jax.lax.rsqrt(jnp.maximum(jnp.sum(jnp.square(x)), eps))


def spectral_norm(w, u, ct, n_iters):
    def normalized(value):
        def step(carry, _):
            u0, _ = carry
            v0 = _l2_normalize(jnp.matmul(value, u0))
            u0 = _l2_normalize(jnp.matmul(v0, value))
            return (u0, v0), None

        (u0, v0), _ = jax.lax.scan(step, (u, jnp.zeros(value.shape[:1])), None, length=n_iters)
        u0 = jax.lax.stop_gradient(u0)
        v0 = jax.lax.stop_gradient(v0)
        sigma = jnp.matmul(jnp.matmul(v0, value), u0)
        return value / sigma, (sigma, u0)

    w_sn, vjp_fn, (sigma, u_new) = jax.vjp(normalized, w, has_aux=True)
    (grad,) = vjp_fn(ct)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_new, "grad": grad}
