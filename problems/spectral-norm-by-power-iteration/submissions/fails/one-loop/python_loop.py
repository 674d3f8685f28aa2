"""The iterations in a Python `for` loop: right numbers, stop_gradient and jax.vjp as asked, but the trace
holds one copy of the step per iteration, so the program grows with `n_iters`.

expect: requirements_not_met
fails: one-loop
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        u_t = u
        for _ in range(n_iters):
            v_t = _unit(w @ u_t)
            u_t = _unit(w.T @ v_t)
        u_t, v_t = jax.lax.stop_gradient(u_t), jax.lax.stop_gradient(v_t)
        sigma = v_t @ w @ u_t
        return w / sigma, (sigma, u_t)

    w_sn, pullback, (sigma, u_t) = jax.vjp(normalized, w, has_aux=True)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_t, "grad": pullback(ct)[0]}
