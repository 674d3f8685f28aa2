"""sigma = ||W u_T|| instead of v_T^T W u_T: a valid estimate too, but not the one defined (it is larger
until the iteration converges).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        u_t = jax.lax.fori_loop(0, n_iters, lambda _, u: _unit(w.T @ _unit(w @ u)), u)
        u_t = jax.lax.stop_gradient(u_t)
        sigma = jnp.linalg.norm(w @ u_t)
        return w / sigma, (sigma, u_t)

    w_sn, pullback, (sigma, u_t) = jax.vjp(normalized, w, has_aux=True)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_t, "grad": pullback(ct)[0]}
