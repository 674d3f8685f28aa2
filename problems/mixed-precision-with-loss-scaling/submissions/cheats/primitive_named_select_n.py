"""A primitive of its own registered as `select_n` (its lowering chooses like `jnp.where`) picks the
parameters: right numbers, but it is not JAX's select.

scale-inside-grad fails too: a primitive of the submission's own cannot be evaluated again with another
`loss_scale` on the grader's side.

expect: requirements_not_met
fails: scale-inside-grad,skip-with-where
"""
import jax
import jax.numpy as jnp
from jax.extend.core import Primitive
from jax.interpreters import mlir

select_p = Primitive("select_n")


def _impl(ok, new, old):
    return jnp.where(ok, new, old)


select_p.def_impl(_impl)
select_p.def_abstract_eval(lambda ok, new, old: jax.core.ShapedArray(new.shape, new.dtype))
mlir.register_lowering(select_p, mlir.lower_fun(_impl, multiple_results=False))


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        p = jax.tree.map(lambda a: a.astype(jnp.float16), p)
        h = jnp.tanh(x.astype(jnp.float16) @ p["w1"] + p["b1"])
        o = h @ p["w2"] + p["b2"]
        loss = jnp.mean((o.astype(jnp.float32) - y) ** 2)
        return loss * loss_scale, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(params)
    grads = jax.tree.map(lambda g: g / loss_scale, grads)
    ok = jnp.all(jnp.array([jnp.isfinite(g).all() for g in jax.tree.leaves(grads)]))
    new = jax.tree.map(lambda p, g: select_p.bind(ok, p - lr * g, p), params, grads)
    return {"params": new, "loss": loss, "applied": ok}
