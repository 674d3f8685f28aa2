"""A port of PyTorch's `torch.nn.utils.spectral_norm` naming (there `u` lives in the output space and `v`
in the input space, so this problem's `u` is torch's `v`), with `fori_loop(..., unroll=True)`: JAX still
traces one scan of `n_iters` steps, and XLA unrolls it. `stop_gradient` on both vectors, gradient by
`jax.grad` of `jnp.vdot(ct, w / sigma)`.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


def normalize(x, eps=1e-12):
    return x / jnp.maximum(jnp.linalg.norm(x), eps)


def _compute_weight(weight_mat, v, n_power_iterations):
    def body(_, uv):
        _, v = uv
        u = normalize(jnp.matmul(weight_mat, v))    # torch: u = normalize(mv(weight_mat, v))
        v = normalize(jnp.matmul(weight_mat.T, u))  # torch: v = normalize(mv(weight_mat.t(), u))
        return u, v

    u0 = jnp.zeros(weight_mat.shape[0], weight_mat.dtype)
    u, v = jax.lax.fori_loop(0, n_power_iterations, body, (u0, v), unroll=True)
    u, v = jax.lax.stop_gradient(u), jax.lax.stop_gradient(v)
    sigma = jnp.dot(u, jnp.matmul(weight_mat, v))
    return weight_mat / sigma, sigma, v


def spectral_norm(w, u, ct, n_iters):
    compute = functools.partial(_compute_weight, v=u, n_power_iterations=n_iters)
    w_sn, sigma, v = compute(w)
    grad = jax.grad(lambda m: jnp.vdot(ct, compute(m)[0]))(w)
    return {"w_sn": w_sn, "sigma": sigma, "u": v, "grad": grad}
