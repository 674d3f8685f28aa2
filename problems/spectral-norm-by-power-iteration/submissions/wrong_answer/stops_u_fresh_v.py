"""`stop_gradient` on u only, with v computed again after the loop as normalize(W u): v then depends on W,
and the gradient picks up its derivative (and v is one half-step newer than v_T).

expect: wrong_answer
fails: none
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        u_t = jax.lax.fori_loop(0, n_iters, lambda _, u: _unit(w.T @ _unit(w @ u)), u)
        u_t = jax.lax.stop_gradient(u_t)
        v = _unit(w @ u_t)
        sigma = v @ w @ u_t
        return w / sigma, (sigma, u_t)

    w_sn, pullback, (sigma, u_t) = jax.vjp(normalized, w, has_aux=True)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_t, "grad": pullback(ct)[0]}
