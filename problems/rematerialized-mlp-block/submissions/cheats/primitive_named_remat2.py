"""A primitive the submission registers itself under the name `remat2`, with params that look like a
checkpoint's (`policy`, `differentiated`), bound on the block's output as an identity with its own JVP rule.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, mlir

remat_p = Primitive("remat2")


def _impl(v, **params):
    return v


remat_p.def_impl(_impl)
remat_p.def_abstract_eval(lambda v, **params: jax.core.ShapedArray(v.shape, v.dtype))
mlir.register_lowering(remat_p, mlir.lower_fun(_impl, multiple_results=False))
ad.deflinear2(remat_p, lambda ct, v, **params: [ct])


def remat_mlp_block(params, x, y):
    def loss(p):
        out = x + jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        out = remat_p.bind(out, policy="dots_saveable", differentiated=True)
        return jnp.mean((out - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
