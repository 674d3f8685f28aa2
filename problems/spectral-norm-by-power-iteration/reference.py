import jax
import jax.numpy as jnp


def _normalize(z):
    return z / jnp.sqrt(jnp.sum(z * z))


def _sigma(w, u, n_iters):
    """The power iteration, then sigma = v^T W u with u and v held constant."""
    def step(_, carry):
        u, _ = carry
        v = _normalize(w @ u)
        u = _normalize(w.T @ v)
        return u, v

    u, v = jax.lax.fori_loop(0, n_iters, step, (u, jnp.zeros(w.shape[0], w.dtype)))
    u, v = jax.lax.stop_gradient(u), jax.lax.stop_gradient(v)
    return v @ w @ u, u


def spectral_norm(w, u, ct, n_iters):
    def normalized(w):
        sigma, u_new = _sigma(w, u, n_iters)
        return w / sigma, (sigma, u_new)

    w_sn, pullback, (sigma, u_new) = jax.vjp(normalized, w, has_aux=True)
    (grad,) = pullback(ct)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_new, "grad": grad}
