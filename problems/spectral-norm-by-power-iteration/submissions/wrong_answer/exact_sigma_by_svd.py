"""The exact spectral norm (`jnp.linalg.norm(w, 2)`, an SVD) in place of the estimate; the loop only
produces the returned u. Right once converged, wrong while the estimate is still moving.

expect: wrong_answer
fails: one-loop
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    u_t = jax.lax.fori_loop(0, n_iters, lambda _, u: _unit(w.T @ _unit(w @ u)), u)
    w_sn, pullback = jax.vjp(lambda w: w / jnp.linalg.norm(w, 2), w)
    return {"w_sn": w_sn, "sigma": jnp.linalg.norm(w, 2), "u": u_t, "grad": pullback(ct)[0]}
