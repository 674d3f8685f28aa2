"""flax-style: a module object with `apply(variables, x)`, wrapped like `nn.remat` does (a `functools.partial`
of `jax.checkpoint` with a policy and `static_argnums` for the module), an optax-style `has_aux` loss, and
`jax.tree_util` to pick the gradients.

expect: accepted
fails: none
"""
import functools

import jax
import jax.numpy as jnp

remat = functools.partial(jax.checkpoint, policy=jax.checkpoint_policies.dots_saveable, static_argnums=(0,))


class ResidualMLP:
    def __hash__(self):
        return 0

    def __eq__(self, other):
        return isinstance(other, ResidualMLP)

    def apply(self, variables, x):
        p = variables["params"]
        hidden = jnp.tanh(jnp.einsum("bd,dh->bh", x, p["w1"]) + p["b1"])
        return x + jnp.einsum("bh,hd->bd", hidden, p["w2"]) + p["b2"]


def _apply(module, variables, x):
    return module.apply(variables, x)


def remat_mlp_block(params, x, y):
    model = ResidualMLP()
    apply = remat(_apply)

    def loss_fn(p):
        out = apply(model, {"params": p}, x)
        return jnp.mean((out - y) ** 2), out

    (loss, _), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    grads = jax.tree_util.tree_map(lambda g: g.astype(jnp.float32), grads)
    return {"loss": loss, "grads": grads}
