"""A `lax.while_loop` with a counter, on `lax.stop_gradient(w)` so reverse mode never meets it: right
numbers, but the number of steps is decided while the loop runs, not fixed in the program.

expect: requirements_not_met
fails: one-loop
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        w0 = jax.lax.stop_gradient(w)

        def body(state):
            i, u, _ = state
            v = _unit(w0 @ u)
            return i + 1, _unit(w0.T @ v), v

        _, u_t, v_t = jax.lax.while_loop(lambda s: s[0] < n_iters, body, (0, u, jnp.zeros(w.shape[0])))
        sigma = v_t @ w @ u_t
        return w / sigma, (sigma, u_t)

    w_sn, pullback, (sigma, u_t) = jax.vjp(normalized, w, has_aux=True)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_t, "grad": pullback(ct)[0]}
