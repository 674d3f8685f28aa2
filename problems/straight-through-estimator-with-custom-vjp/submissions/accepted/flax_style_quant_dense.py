"""flax-style: a `QuantDense` module object whose `apply(variables, x)` quantizes its kernel with a module-level
`custom_vjp` (levels through `nondiff_argnums`), an optax-style `value_and_grad(..., has_aux=True)` over a
params dict, and `jax.tree_util` to read the gradient.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def fake_quant(levels, kernel):
    return jnp.round(jnp.clip(kernel, -1.0, 1.0) * levels) / levels


def _fake_quant_fwd(levels, kernel):
    return fake_quant(levels, kernel), (jnp.abs(kernel) <= 1.0,)


def _fake_quant_bwd(levels, res, g):
    (inside,) = res
    return (jnp.where(inside, g, 0.0),)


fake_quant.defvjp(_fake_quant_fwd, _fake_quant_bwd)


class QuantDense:
    def __init__(self, levels):
        self.levels = levels

    def apply(self, variables, x):
        return x @ fake_quant(self.levels, variables["params"]["kernel"])


def ste_value_and_grad(w, x, y, levels):
    model = QuantDense(levels)

    def loss_fn(params):
        pred = model.apply({"params": params}, x)
        return jnp.mean(jnp.square(pred - y)), pred

    (loss, _), grads = jax.value_and_grad(loss_fn, has_aux=True)({"kernel": w})
    return {"loss": loss, "grad": jax.tree_util.tree_leaves(grads)[0]}
