"""A `fori_loop` of `n_iters` power iterations is run and its result thrown away; the answer comes from
a Python loop.

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
    jax.lax.fori_loop(0, n_iters, lambda _, u: _unit(w.T @ _unit(w @ u)), u)
    return _answer(w, u, ct, n_iters, _unrolled(w, u, n_iters))
