"""Returns the starting vector u instead of u_T, the one the next training step should start from: wrong
numbers, and `u` reaches the output by a path around the loop.

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

    u_t, v_t = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0])))
    u_t, v_t = jax.lax.stop_gradient(u_t), jax.lax.stop_gradient(v_t)
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ w @ u_t), w)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u, "grad": pullback(ct)[0]}
