"""A primitive of the submission's own, `Primitive("mul")`, does the multiplications leaf by leaf: it looks
like JAX's `mul` by name, but its work is invisible to the grader.

expect: requirements_not_met
fails: no-host-callback
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

mul_p = Primitive("mul")
mul_p.def_impl(lambda a, b: jnp.multiply(a, b))
mul_p.def_abstract_eval(lambda a, b: jax.core.ShapedArray(jnp.broadcast_shapes(a.shape, b.shape), a.dtype))
mlir.register_lowering(mul_p, mlir.lower_fun(lambda a, b: jnp.multiply(a, b), multiple_results=False))


def sgd_momentum(params, grads, velocity, lr, momentum):
    m = jnp.float32(momentum)
    step = jnp.float32(lr)
    new_velocity = jax.tree.map(lambda v, g: mul_p.bind(jnp.broadcast_to(m, v.shape), v) + g, velocity, grads)
    new_params = jax.tree.map(lambda p, v: p - mul_p.bind(jnp.broadcast_to(step, v.shape), v), params, new_velocity)
    return {"params": new_params, "velocity": new_velocity}
