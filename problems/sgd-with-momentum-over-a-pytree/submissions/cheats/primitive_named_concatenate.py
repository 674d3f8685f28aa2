"""A primitive of its own named like JAX's `concatenate` takes every leaf at once and returns the updated
leaves: it mixes all places, and the grader cannot see inside it.

expect: requirements_not_met
fails: leaf-by-leaf, no-host-callback
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

fused_p = Primitive("concatenate")
fused_p.multiple_results = True


def _impl(lr, momentum, *leaves):
    n = len(leaves) // 3
    p, g, v = leaves[:n], leaves[n:2 * n], leaves[2 * n:]
    new_v = [momentum * a + b for a, b in zip(v, g)]
    return [a - lr * b for a, b in zip(p, new_v)] + new_v


fused_p.def_impl(_impl)
fused_p.def_abstract_eval(lambda lr, momentum, *leaves: [jax.core.ShapedArray(x.shape, x.dtype)
                                                           for x in leaves[:len(leaves) // 3]] * 2)
mlir.register_lowering(fused_p, mlir.lower_fun(_impl, multiple_results=True))


def sgd_momentum(params, grads, velocity, lr, momentum):
    leaves, treedef = jax.tree.flatten(params)
    outs = fused_p.bind(jnp.float32(lr), jnp.float32(momentum), *leaves, *treedef.flatten_up_to(grads),
                        *treedef.flatten_up_to(velocity))
    n = len(leaves)
    return {"params": treedef.unflatten(outs[:n]), "velocity": treedef.unflatten(outs[n:])}
