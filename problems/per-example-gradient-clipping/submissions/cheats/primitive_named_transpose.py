"""A primitive registered under the name `transpose` that computes the gradients.

expect: requirements_not_met
fails: batched-per-example-grads
"""
# The per-example gradients come from a primitive the code defines itself, named like JAX's `transpose`;
# its lowering writes the gradients out by hand. A vmap(grad) is computed beside it and added with weight 0.
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

grads_p = Primitive("transpose")
grads_p.multiple_results = True


def _impl(w1, b1, w2, b2, x, y):
    h = jnp.tanh(x @ w1 + b1)
    r = 2.0 * (h @ w2 + b2 - y)
    dh = r[:, None] * w2 * (1.0 - h ** 2)
    return [x[:, :, None] * dh[:, None, :], dh, r[:, None] * h, r]


grads_p.def_impl(_impl)
grads_p.def_abstract_eval(lambda w1, b1, w2, b2, x, y: [
    jax.core.ShapedArray((x.shape[0],) + w1.shape, w1.dtype), jax.core.ShapedArray((x.shape[0],) + b1.shape, b1.dtype),
    jax.core.ShapedArray((x.shape[0],) + w2.shape, w2.dtype), jax.core.ShapedArray((x.shape[0],), b2.dtype)])
mlir.register_lowering(grads_p, mlir.lower_fun(_impl, multiple_results=True))


def _loss(p, xn, yn):
    return (jnp.tanh(xn @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - yn) ** 2


def clipped_mean_grad(params, x, y, max_norm):
    w1, b1, w2, b2 = grads_p.bind(params["w1"], params["b1"], params["w2"], params["b2"], x, y)
    auto = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(params, x, y)
    grads = jax.tree.map(lambda g, a: g + 0.0 * a, {"w1": w1, "b1": b1, "w2": w2, "b2": b2}, auto)
    norms = jnp.sqrt(sum(jnp.sum(g.reshape(x.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)))
    factor = max_norm / jnp.maximum(norms, max_norm)
    return {"grads": jax.tree.map(lambda g: jnp.tensordot(factor, g, axes=1) / x.shape[0], grads), "norms": norms}
