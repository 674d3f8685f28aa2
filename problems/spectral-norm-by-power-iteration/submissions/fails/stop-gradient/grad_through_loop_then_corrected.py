"""`jax.vjp` through the whole loop (no stop_gradient), then its result replaced by the hand formula with
`grad_autodiff - grad_autodiff + by_hand`: the backward pass runs back through the loop and does not carry
the answer.

expect: requirements_not_met
fails: stop-gradient
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
    def normalized(w):
        u_t, v_t = _vectors(w, u, n_iters)
        return w / (v_t @ w @ u_t)

    _, pullback = jax.vjp(normalized, w)
    through = pullback(ct)[0]
    u_t, v_t = _vectors(w, u, n_iters)
    sigma = v_t @ w @ u_t
    return {"w_sn": w / sigma, "sigma": sigma, "u": u_t, "grad": through - through + _by_hand(w, ct, u_t, v_t)}
