"""A Python loop and a hand-written gradient: right numbers, neither structure.

expect: requirements_not_met
fails: one-loop
"""
import jax.numpy as jnp


def spectral_norm(w, u, ct, n_iters):
    for _ in range(n_iters):
        v = w @ u
        v = v / jnp.linalg.norm(v)
        u = w.T @ v
        u = u / jnp.linalg.norm(u)
    sigma = v @ w @ u
    grad = ct / sigma - (jnp.sum(ct * w) / sigma ** 2) * jnp.outer(v, u)
    return {"w_sn": w / sigma, "sigma": sigma, "u": u, "grad": grad}
