"""The power iteration runs first, outside the differentiated function, so `jax.vjp` only sees
`w / (v @ w @ u)` with `u` and `v` closed over as constants: no `stop_gradient` is needed, and the
backward pass never meets the loop.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def spectral_norm(w, u, ct, n_iters):
    def step(_, carry):
        u, _ = carry
        v = w @ u
        v = v / jnp.linalg.norm(v)
        u = w.T @ v
        return u / jnp.linalg.norm(u), v

    u_t, v_t = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros_like(w[:, 0])))
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ (w @ u_t)), w)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u_t, "grad": pullback(ct)[0]}
