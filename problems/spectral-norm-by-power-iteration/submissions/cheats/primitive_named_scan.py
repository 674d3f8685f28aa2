"""A primitive of its own registered as `scan`, whose implementation and lowering run the Python loop:
right numbers, but it is not JAX's scan.

expect: requirements_not_met
fails: one-loop
"""
from jax.extend.core import Primitive
from jax.interpreters import mlir
import jax
import jax.numpy as jnp


def _unit(x):
    return x / jnp.linalg.norm(x)


def _unrolled(w, u, n_iters):
    v = None
    for _ in range(n_iters):
        v = _unit(w @ u)
        u = _unit(w.T @ v)
    return jax.lax.stop_gradient(u), jax.lax.stop_gradient(v)


def _answer(w, u, ct, n_iters, vectors):
    u_t, v_t = vectors
    w_sn, pullback = jax.vjp(lambda w: w / (v_t @ w @ u_t), w)
    return {"w_sn": w_sn, "sigma": v_t @ w @ u_t, "u": u_t, "grad": pullback(ct)[0]}


scan_p = Primitive("scan")
scan_p.multiple_results = True


def _impl(w, u, *, n_iters):
    return _unrolled(w, u, n_iters)


scan_p.def_impl(_impl)
scan_p.def_abstract_eval(lambda w, u, *, n_iters: (jax.core.ShapedArray(u.shape, u.dtype),
                                                   jax.core.ShapedArray(w.shape[:1], w.dtype)))
mlir.register_lowering(scan_p, mlir.lower_fun(_impl, multiple_results=True))


def spectral_norm(w, u, ct, n_iters):
    u_t, v_t = scan_p.bind(jax.lax.stop_gradient(w), u, n_iters=n_iters)
    return _answer(w, u, ct, n_iters, (u_t, v_t))
