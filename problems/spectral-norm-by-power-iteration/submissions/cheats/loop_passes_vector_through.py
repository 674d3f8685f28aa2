"""A `lax.scan` of `n_iters` steps that only passes u through (its body computes nothing), followed by the
iterations written out in Python: the answer flows through the loop, but the loop does no iteration.

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
    u_passed, _ = jax.lax.scan(lambda u, _: (u, None), u, None, length=n_iters)
    return _answer(w, u_passed, ct, n_iters, _unrolled(w, u_passed, n_iters))
