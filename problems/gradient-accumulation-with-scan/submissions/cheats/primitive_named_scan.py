"""A primitive registered under the name `scan` whose lowering computes the full-batch gradient.

expect: requirements_not_met
fails: one-scan, grad-inside-scan
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

scan_p = Primitive("scan")
scan_p.multiple_results = True


def _loss(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    o = h @ params["w2"] + params["b2"]
    return jnp.sum((o - y) ** 2) / x.shape[0]


def _impl(*leaves, treedef=None):
    params, x, y = jax.tree.unflatten(treedef, leaves)
    loss, grads = jax.value_and_grad(_loss)(params, x, y)
    return [loss] + jax.tree.leaves(grads)


scan_p.def_impl(_impl)
scan_p.def_abstract_eval(lambda *avals, treedef=None: [jax.core.ShapedArray((), jnp.float32)] + [
    jax.core.ShapedArray(a.shape, a.dtype) for a in avals[:4]])
mlir.register_lowering(scan_p, mlir.lower_fun(_impl, multiple_results=True))


def grad_accumulation(params, x, y, num_microbatches):
    leaves, treedef = jax.tree.flatten((params, x, y))
    out = scan_p.bind(*leaves, treedef=treedef)
    grads = jax.tree.unflatten(jax.tree.structure(params), out[1:])
    return {"loss": out[0], "grads": grads}
