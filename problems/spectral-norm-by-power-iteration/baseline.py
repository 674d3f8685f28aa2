"""The same spectral normalisation with the iterations in a Python `for` loop: the trace holds one copy of
the step per iteration. The "before" of the Cost tab."""
import jax
import jax.numpy as jnp


def _normalize(z):
    return z / jnp.sqrt(jnp.sum(z * z))


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        u_t, v_t = u, None
        for _ in range(n_iters):
            v_t = _normalize(w @ u_t)
            u_t = _normalize(w.T @ v_t)
        u_t, v_t = jax.lax.stop_gradient(u_t), jax.lax.stop_gradient(v_t)
        sigma = v_t @ w @ u_t
        return w / sigma, (sigma, u_t)

    w_sn, pullback, (sigma, u_new) = jax.vjp(normalized, w, has_aux=True)
    (grad,) = pullback(ct)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_new, "grad": grad}
