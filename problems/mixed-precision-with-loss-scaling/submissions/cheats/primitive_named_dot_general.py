"""A primitive of its own registered as `dot_general`, whose lowering multiplies in float16, computes the
loss; the gradients come from JAX's products. The look-alike is not JAX's `dot_general`.

scale-inside-grad fails too: a primitive of the submission's own cannot be evaluated again with another
`loss_scale` on the grader's side.

expect: requirements_not_met
fails: float16-matmuls,scale-inside-grad
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

dot_p = Primitive("dot_general")


def _impl(a, b):
    return jnp.matmul(a, b)


dot_p.def_impl(_impl)
dot_p.def_abstract_eval(lambda a, b: jax.core.ShapedArray((a.shape[0], b.shape[1]), a.dtype))
mlir.register_lowering(dot_p, mlir.lower_fun(_impl, multiple_results=False))


def _net(p, x, matmul):
    p = jax.tree.map(lambda a: a.astype(jnp.float16), p)
    h = jnp.tanh(matmul(x.astype(jnp.float16), p["w1"]) + p["b1"])
    return (matmul(h, p["w2"]) + p["b2"]).astype(jnp.float32)


def mixed_precision_step(params, x, y, loss_scale, lr):
    loss = jnp.mean((_net(params, x, dot_p.bind) - y) ** 2)
    grads = jax.grad(lambda p: jnp.mean((_net(p, x, jnp.matmul) - y) ** 2) * loss_scale)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: jnp.where(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
