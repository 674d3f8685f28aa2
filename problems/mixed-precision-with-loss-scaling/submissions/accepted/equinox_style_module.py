"""Written in equinox's style (equinox is not installed here): the model is a pytree dataclass with a
`__call__`, the loss is differentiated with respect to the model itself, the gradients are unscaled with
`jax.tree_util.tree_map`, and the new model is chosen leaf by leaf with `jnp.where` on one boolean.

expect: accepted
fails: none
"""
import dataclasses

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class MLP:
    w1: jax.Array
    b1: jax.Array
    w2: jax.Array
    b2: jax.Array

    def __call__(self, x):
        half = jax.tree_util.tree_map(lambda a: a.astype(jnp.float16), self)
        h = jnp.tanh(jnp.einsum("bd,dh->bh", x.astype(jnp.float16), half.w1) + half.b1)
        return jnp.einsum("bh,hk->bk", h, half.w2) + half.b2


def mixed_precision_step(params, x, y, loss_scale, lr):
    model = MLP(**params)

    def loss_fn(m):
        loss = jnp.mean((m(x).astype(jnp.float32) - y) ** 2)
        return loss_scale * loss, loss

    grads, loss = jax.grad(loss_fn, has_aux=True)(model)
    grads = jax.tree_util.tree_map(lambda g: g / loss_scale, grads)
    finite = jax.tree_util.tree_reduce(jnp.logical_and, jax.tree_util.tree_map(lambda g: jnp.isfinite(g).all(), grads))
    new = jax.tree_util.tree_map(lambda p, g: jnp.where(finite, p - lr * g, p), model, grads)
    return {"params": {f.name: getattr(new, f.name) for f in dataclasses.fields(new)}, "loss": loss,
            "applied": finite}
