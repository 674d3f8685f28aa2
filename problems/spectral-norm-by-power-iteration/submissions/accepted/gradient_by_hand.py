"""The gradient written out by hand, C / sigma - (<C, W> / sigma^2) v u^T: right numbers (it is what
autodiff computes with u and v held constant), but no autodiff, so nothing shows the estimate is kept out
of a backward pass.

The gradient is written by hand, and it is what `stop_gradient` buys: it flows through the final estimate
only, never back through the iterations (no loop runs in reverse). How the gradient is computed is the
learner's, so this passes.

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

    u_t, v_t = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0])))
    sigma = v_t @ w @ u_t
    grad = ct / sigma - (jnp.sum(ct * w) / sigma ** 2) * jnp.outer(v_t, u_t)
    return {"w_sn": w / sigma, "sigma": sigma, "u": u_t, "grad": grad}
