"""Written the way flax's `flax.training.dynamic_scale.DynamicScale.value_and_grad` does it (flax is not
installed here): a small dataclass holds the scale, wraps the loss function so its value and gradient are
scaled, tests every leaf with `jnp.isfinite` folded into one boolean, and the train step selects the new
state with a tree of `jnp.where`. The model is a flax-like module whose `dtype` is the compute dtype and
whose parameters stay float32 (`param_dtype`).

expect: accepted
fails: none
"""
import dataclasses
import functools

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class MLP:
    dtype: jnp.dtype = jnp.float16        # compute dtype
    param_dtype: jnp.dtype = jnp.float32  # storage dtype of the master weights

    def apply(self, variables, x):
        p = jax.tree_util.tree_map(lambda a: jnp.asarray(a, self.dtype), variables)
        x = jnp.asarray(x, self.dtype)
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return h @ p["w2"] + p["b2"]


@dataclasses.dataclass(frozen=True)
class DynamicScale:
    scale: float

    def value_and_grad(self, fun, has_aux=False):
        @functools.wraps(fun)
        def loss_wrapper(*args):
            aux = fun(*args)
            if has_aux:
                return (self.scale * aux[0], aux[1])
            return self.scale * aux

        grad_fn = jax.value_and_grad(loss_wrapper, has_aux=has_aux)

        def grad_fn_wrapper(*args):
            aux, grad = grad_fn(*args)
            aux = (aux[0] / self.scale, aux[1]) if has_aux else aux / self.scale
            grad = jax.tree_util.tree_map(lambda g: jnp.asarray(g, jnp.float32) / self.scale, grad)
            finite = jnp.array(True)
            for g in jax.tree_util.tree_leaves(grad):
                finite &= jnp.all(jax.lax.is_finite(g))
            return finite, aux, grad

        return grad_fn_wrapper


def mixed_precision_step(params, x, y, loss_scale, lr):
    model = MLP()

    def loss_fn(variables):
        out = model.apply(variables, x)
        return jnp.mean((out.astype(jnp.float32) - y) ** 2)

    is_fin, loss, grads = DynamicScale(loss_scale).value_and_grad(loss_fn)(params)
    stepped = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    select_tree = functools.partial(jax.tree_util.tree_map, functools.partial(jnp.where, is_fin))
    return {"params": select_tree(stepped, params), "loss": loss, "applied": is_fin}
