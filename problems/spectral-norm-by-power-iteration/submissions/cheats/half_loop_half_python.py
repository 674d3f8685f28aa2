"""Half of the vectors from the loop, half from a Python loop: the starting u reaches the answer by a
path around the loop.

expect: requirements_not_met
fails: one-loop
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def _unrolled(w, u, n_iters):
    v = None
    for _ in range(n_iters):
        v = _unit(w @ u)
        u = _unit(w.T @ v)
    return jax.lax.stop_gradient(u), jax.lax.stop_gradient(v)


def _answer(w, u, ct, n_iters, vectors):
    u_t, v_t = vectors
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ w @ u_t), w)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u_t, "grad": pullback(ct)[0]}


def spectral_norm(w, u, ct, n_iters):
    def step(_, carry):
        u, _ = carry
        v = _unit(w @ u)
        return _unit(w.T @ v), v

    u_l, v_l = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0])))
    u_p, v_p = _unrolled(w, u, n_iters)
    vectors = (jax.lax.stop_gradient(0.5 * u_l + 0.5 * u_p), jax.lax.stop_gradient(0.5 * v_l + 0.5 * v_p))
    return _answer(w, u, ct, n_iters, vectors)
