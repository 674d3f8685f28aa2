"""`jax.vjp` of the normalisation is called and its pullback's result thrown away; `grad` is written out
by hand.

The gradient is written by hand, and it is what `stop_gradient` buys: it flows through the final estimate
only, never back through the iterations (no loop runs in reverse). How the gradient is computed is the
learner's, so this passes.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def _vectors(w, u, n_iters):
    def step(_, carry):
        u, _ = carry
        v = _unit(w @ u)
        return _unit(w.T @ v), v

    return jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0])))


def _by_hand(w, ct, u_t, v_t):
    sigma = v_t @ w @ u_t
    return ct / sigma - (jnp.sum(ct * w) / sigma ** 2) * jnp.outer(v_t, u_t)


def spectral_norm(w, u, ct, n_iters):
    u_t, v_t = _vectors(w, u, n_iters)
    u_t, v_t = jax.lax.stop_gradient(u_t), jax.lax.stop_gradient(v_t)
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ w @ u_t), w)
    _ = pullback(ct)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u_t, "grad": _by_hand(w, ct, u_t, v_t)}
