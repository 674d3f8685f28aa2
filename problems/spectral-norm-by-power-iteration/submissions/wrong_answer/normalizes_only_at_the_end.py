"""Power iteration without normalising each step: z <- W^T W z, normalised once at the end. The same
direction in exact arithmetic, but (W^T W)^30 z overflows to inf for large weights and underflows to zero
for small ones.

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def step(_, carry):
        z, _ = carry
        a = w @ z
        return w.T @ a, a

    z, a = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0])))
    u_t, v_t = jax.lax.stop_gradient(_unit(z)), jax.lax.stop_gradient(_unit(a))
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ w @ u_t), w)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u_t, "grad": pullback(ct)[0]}
