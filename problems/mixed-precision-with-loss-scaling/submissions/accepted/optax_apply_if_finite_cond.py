"""Written the way optax's `apply_if_finite` wrapper decides (optax is not installed here): the gradients
are flattened with `jax.flatten_util.ravel_pytree`, one `jnp.isfinite(...).all()` tests them, and
`lax.cond` runs either the update or the identity on the whole parameter tree.

expect: accepted
fails: none
"""
import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def _forward(params, x):
    half = jax.tree_util.tree_map(lambda a: a.astype(jnp.float16), params)
    h = jnp.tanh(x.astype(jnp.float16) @ half["w1"] + half["b1"])
    return (h @ half["w2"] + half["b2"]).astype(jnp.float32)


def mixed_precision_step(params, x, y, loss_scale, lr):
    def loss_fn(p):
        loss = jnp.mean((_forward(p, x) - y) ** 2)
        return loss * loss_scale, loss

    (_, loss), scaled = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates = jax.tree_util.tree_map(lambda g: -lr * (g / loss_scale), scaled)
    flat, _ = ravel_pytree(updates)
    finite = jnp.isfinite(flat).all()
    new = jax.lax.cond(finite,
                       lambda p, u: jax.tree_util.tree_map(jnp.add, p, u),
                       lambda p, u: p,
                       params, updates)
    return {"params": new, "loss": loss, "applied": finite}
