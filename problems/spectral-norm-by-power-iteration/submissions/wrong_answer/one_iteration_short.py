"""Off by one: `fori_loop(1, n_iters, ...)` after a first half-step written before the loop, so the
estimate is one iteration behind (and, with n_iters = 1, the loop does nothing).

expect: wrong_answer
fails: one-loop
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def step(_, carry):
        u, _ = carry
        v = _unit(w @ u)
        return _unit(w.T @ v), v

    v0 = _unit(w @ u)
    u_t, v_t = jax.lax.fori_loop(1, n_iters, step, (u, v0))
    u_t, v_t = jax.lax.stop_gradient(u_t), jax.lax.stop_gradient(v_t)
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ w @ u_t), w)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u_t, "grad": pullback(ct)[0]}
