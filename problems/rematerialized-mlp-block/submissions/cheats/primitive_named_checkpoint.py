"""A primitive registered under the name `checkpoint` that carries a decoy sub-program (the block) as a
parameter, while its implementation computes the block with plain operations.

expect: requirements_not_met
fails: checkpoint-dots-saveable, checkpoint-inside-grad, tanh-in-checkpoint
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import ad, mlir

ckpt_p = Primitive("checkpoint")


def _impl(h, **params):
    return h


ckpt_p.def_impl(_impl)
ckpt_p.def_abstract_eval(lambda h, **params: jax.core.ShapedArray(h.shape, h.dtype))
mlir.register_lowering(ckpt_p, mlir.lower_fun(_impl, multiple_results=False))
ad.deflinear2(ckpt_p, lambda ct, h, **params: [ct])


def remat_mlp_block(params, x, y):
    decoy = jax.make_jaxpr(lambda z: jnp.tanh(z))(jnp.zeros((x.shape[0], params["b1"].shape[0])))

    def loss(p):
        h = ckpt_p.bind(jnp.tanh(x @ p["w1"] + p["b1"]), jaxpr=decoy, policy="dots_saveable", prevent_cse=True)
        return jnp.mean((x + h @ p["w2"] + p["b2"] - y) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return {"loss": value, "grads": grads}
