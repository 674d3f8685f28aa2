"""The classic mistake: no `stop_gradient`, so `jax.vjp` also differentiates through every power
iteration. Same sigma and w_sn, but a different gradient wherever the estimate has not converged (one step
from a random start, a slowly converging matrix).

expect: wrong_answer
fails: stop-gradient
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        def step(_, carry):
            u, _ = carry
            v = _unit(w @ u)
            return _unit(w.T @ v), v

        u_t, v_t = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0])))
        sigma = v_t @ w @ u_t
        return w / sigma, (sigma, u_t)

    w_sn, pullback, (sigma, u_t) = jax.vjp(normalized, w, has_aux=True)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_t, "grad": pullback(ct)[0]}
