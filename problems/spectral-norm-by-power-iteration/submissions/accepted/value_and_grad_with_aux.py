"""`jax.value_and_grad` of `<ct, w / sigma>` with `has_aux=True`, where the auxiliary output returns
`w / sigma`, `sigma` and `u`; the loop is a `lax.scan` that also stacks each step's sigma estimate (only
the last vectors are used), and the vectors are stopped as a tuple.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.sqrt(jnp.vdot(x, x))


def spectral_norm(w, u, ct, n_iters):
    def objective(w):
        def step(uv, _):
            u, _ = uv
            v = _unit(jnp.einsum("mn,n->m", w, u))
            u = _unit(jnp.einsum("mn,m->n", w, v))
            return (u, v), jnp.vdot(v, w @ u)

        (u_t, v_t), _history = jax.lax.scan(step, (u, jnp.zeros(w.shape[0])), length=n_iters)
        u_t, v_t = jax.lax.stop_gradient((u_t, v_t))
        sigma = jnp.einsum("m,mn,n->", v_t, w, u_t)
        w_sn = w / sigma
        return jnp.sum(ct * w_sn), (w_sn, sigma, u_t)

    (_, (w_sn, sigma, u_t)), grad = jax.value_and_grad(objective, has_aux=True)(w)
    return {"w_sn": w_sn, "sigma": sigma, "u": u_t, "grad": grad}
